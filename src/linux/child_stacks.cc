#include "linux/child_stacks.h"

#include <sys/mman.h>
#include <unistd.h>

#include <utility>

#include "core/syscall_error.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace cordon::linux_native {
namespace {

// Under AddressSanitizer a CLONE_VM child writes its stack frames' poison into the shadow
// memory it shares with us, and exits or execs without clearing it: a later mapping at the
// same addresses would start out poisoned. Every stack starts and ends clean.
void Unpoison(void* start, std::size_t length) {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_UNPOISON_MEMORY_REGION(start, length);
#else
  (void)start;
  (void)length;
#endif
}

constexpr std::size_t kCount = 3;  // init, command, relay

std::size_t PageSize() {
  const long size = ::sysconf(_SC_PAGESIZE);
  return size > 0 ? static_cast<std::size_t>(size) : 4096;
}

}  // namespace

ChildStacks::ChildStacks(ChildStacks&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)), length_(std::exchange(other.length_, 0)) {}

ChildStacks& ChildStacks::operator=(ChildStacks&& other) noexcept {
  if (this != &other) {
    Unmap();
    base_ = std::exchange(other.base_, nullptr);
    length_ = std::exchange(other.length_, 0);
  }
  return *this;
}

ChildStacks::~ChildStacks() { Unmap(); }

void ChildStacks::Unmap() {
  if (base_ == nullptr) return;
  Unpoison(base_, length_);
  ::munmap(base_, length_);
  base_ = nullptr;
  length_ = 0;
}

Result<ChildStacks> ChildStacks::Map() {
  const std::size_t page = PageSize();
  const std::size_t slot = page + kStackBytes;  // guard page, then the stack above it
  ChildStacks stacks;
  // Reserved without access, then each stack opened: the guard pages stay PROT_NONE.
  void* base =
      ::mmap(nullptr, kCount * slot, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return core::FailSyscall("mmap", "sandbox child stacks");
  stacks.base_ = static_cast<char*>(base);
  stacks.length_ = kCount * slot;
  for (std::size_t i = 0; i < kCount; ++i) {
    char* stack = stacks.base_ + i * slot + page;
    if (::mprotect(stack, kStackBytes, PROT_READ | PROT_WRITE) != 0) {
      return core::FailSyscall("mprotect", "sandbox child stack");
    }
    Unpoison(stack, kStackBytes);
  }
  return stacks;
}

char* ChildStacks::top(int index) const {
  if (base_ == nullptr) return nullptr;
  const std::size_t slot = length_ / kCount;
  return base_ + static_cast<std::size_t>(index) * slot + slot;  // slot sizes are page multiples
}

}  // namespace cordon::linux_native
