#include "policy/command.h"

namespace cordon::policy {
namespace {

bool IsDescriptorWord(const std::string& s) {
  if (s == "-") return true;
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool digit = s[i] >= '0' && s[i] <= '9';
    if (!digit && !(s[i] == '-' && i + 1 == s.size() && i > 0)) return false;
  }
  return true;
}

}  // namespace

bool Redirect::Writes() const {
  switch (op) {
    case RedirectOp::kOut:
    case RedirectOp::kAppend:
    case RedirectOp::kClobber:
    case RedirectOp::kReadWrite:
    case RedirectOp::kOutErr:
    case RedirectOp::kAppendOutErr:
      return true;
    case RedirectOp::kDupOut:  // ">&2" duplicates a descriptor; ">& file" writes the file
      return !IsDescriptorWord(target.text);
    case RedirectOp::kIn:
    case RedirectOp::kDupIn:
    case RedirectOp::kHereDoc:
    case RedirectOp::kHereString:
      return false;
  }
  return false;
}

int Redirect::EffectiveFd() const {
  if (fd >= 0) return fd;
  switch (op) {
    case RedirectOp::kIn:
    case RedirectOp::kReadWrite:
    case RedirectOp::kDupIn:
    case RedirectOp::kHereDoc:
    case RedirectOp::kHereString:
      return 0;
    case RedirectOp::kOut:
    case RedirectOp::kAppend:
    case RedirectOp::kClobber:
    case RedirectOp::kDupOut:
    case RedirectOp::kOutErr:
    case RedirectOp::kAppendOutErr:
      return 1;
  }
  return 1;
}

}  // namespace cordon::policy
