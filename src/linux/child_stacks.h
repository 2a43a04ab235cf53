// Stacks for the sandbox's children that run in their creator's address space (CLONE_VM):
// such a child cannot continue on the creator's stack, whose frames the creator returns
// through once the child has exec'd. Mapped by the parent before clone (the children may not
// allocate), each above a guard page that turns an overflow into a fault instead of a write
// into a neighbouring mapping.
#pragma once

#include <cstddef>

#include "cordon/error.h"

namespace cordon::linux_native {

class ChildStacks {
 public:
  // Each stack holds this much; the child code keeps its buffers small (the largest is a
  // PATH_MAX path), so only the few pages it touches are ever faulted in.
  static constexpr std::size_t kStackBytes = 128 * 1024;

  ChildStacks() = default;
  ChildStacks(ChildStacks&& other) noexcept;
  ChildStacks& operator=(ChildStacks&& other) noexcept;
  ChildStacks(const ChildStacks&) = delete;
  ChildStacks& operator=(const ChildStacks&) = delete;
  ~ChildStacks();

  // Three stacks (the sandbox's init, its command, and a relay that makes init: a zygote's
  // joiner), each with a PROT_NONE guard page below.
  [[nodiscard]] static Result<ChildStacks> Map();

  // Highest addresses (stacks grow down on every architecture cordon builds for), 16-aligned.
  char* init_top() const { return top(0); }
  char* command_top() const { return top(1); }
  char* relay_top() const { return top(2); }

 private:
  char* top(int index) const;
  void Unmap();

  char* base_ = nullptr;
  std::size_t length_ = 0;
};

}  // namespace cordon::linux_native
