// The missing directories on the way to a protected or hidden path inside a writable root,
// made for the run and removed after it when still empty (Seatbelt backend, decision 0062).
//
// Seatbelt pins the directories on the way to a protected path (none is created, renamed or
// removed, in any case of its name), so that no `.Config` or link is made where host tools
// open `.config/mise.toml`. A pin over a missing directory would keep the command from making
// `.github/workflows/ci.yml` in a repository without `.github`: the launcher makes the missing
// ones first, as Linux's placeholders hold theirs, and the pins hold existing directories.
//
//   HeldParents held = HeldParents::Make(policy);  // before the command starts
//   ... run ...                                                // ~HeldParents: rmdir if empty
#pragma once

#include <filesystem>
#include <vector>

#include "seatbelt/profile.h"

namespace cordon::seatbelt {

class HeldParents {
 public:
  HeldParents() = default;
  HeldParents(HeldParents&& other) noexcept : made_(std::move(other.made_)) { other.made_.clear(); }
  HeldParents& operator=(HeldParents&& other) noexcept;
  HeldParents(const HeldParents&) = delete;
  HeldParents& operator=(const HeldParents&) = delete;
  ~HeldParents();

  // Makes (mode 0755) each missing directory strictly between a writable root and a protected
  // or hidden path inside it, outermost first. One that cannot be made (a root-owned or
  // read-only directory above it) is left missing: the pin keeps it so, and the command could
  // not make it either. Known limits: a run killed before its end leaves the empty directories
  // it made; two runs in one workspace may remove each other's (the later one's command then
  // cannot make that directory itself).
  [[nodiscard]] static HeldParents Make(const SeatbeltPolicy& policy);

  // What was made, outermost first.
  const std::vector<std::filesystem::path>& made() const { return made_; }

 private:
  void Release();
  std::vector<std::filesystem::path> made_;
};

}  // namespace cordon::seatbelt
