// Word lists written as one string, " a b c " (the option tables of wrappers and interpreters).
#pragma once

#include <string_view>

namespace cordon::policy {

// Whether `item` is one of the words of `list` (" a b c ": every word between spaces).
inline bool InSpaceList(std::string_view list, std::string_view item) {
  if (item.empty()) return false;
  for (std::size_t at = list.find(item); at != std::string_view::npos;
       at = list.find(item, at + 1)) {
    const bool starts = at > 0 && list[at - 1] == ' ';
    const bool ends = at + item.size() < list.size() && list[at + item.size()] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace cordon::policy
