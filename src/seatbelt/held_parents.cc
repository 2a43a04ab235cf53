#include "seatbelt/held_parents.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "core/paths.h"

namespace cordon::seatbelt {

HeldParents& HeldParents::operator=(HeldParents&& other) noexcept {
  if (this != &other) {
    Release();
    made_ = std::move(other.made_);
    other.made_.clear();
  }
  return *this;
}

HeldParents::~HeldParents() { Release(); }

// Innermost first; a directory the command filled stays (rmdir refuses it).
void HeldParents::Release() {
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) (void)::rmdir(it->c_str());
  made_.clear();
}

HeldParents HeldParents::Make(const SeatbeltPolicy& policy) {
  HeldParents held;
  for (const auto* list :
       {&policy.read_only, &policy.hidden_dirs, &policy.hidden_files, &policy.hidden_absent}) {
    for (const std::filesystem::path& path : *list) {
      const auto root = std::find_if(
          policy.writable.begin(), policy.writable.end(),
          [&](const std::filesystem::path& r) { return r != path && core::IsWithin(path, r); });
      if (root == policy.writable.end()) continue;
      std::vector<std::filesystem::path> missing;
      for (std::filesystem::path up = path.parent_path(); up != *root && core::IsWithin(up, *root);
           up = up.parent_path()) {
        struct stat st {};
        if (::lstat(up.c_str(), &st) == 0) break;  // it and what is above it exist
        missing.push_back(up);
      }
      for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (::mkdir(it->c_str(), 0755) == 0) {
          held.made_.push_back(*it);
        } else if (errno != EEXIST) {
          break;  // not makeable here (a root-owned or read-only directory): nor by the command
        }
      }
    }
  }
  return held;
}

}  // namespace cordon::seatbelt
