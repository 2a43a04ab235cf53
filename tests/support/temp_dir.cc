#include "support/temp_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <system_error>

namespace cordon::test_support {

TempDir::TempDir(const std::filesystem::path& parent) {
  std::string pattern = (parent / "cordon-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << pattern << ") failed";
    return;
  }
  std::error_code ec;
  path_ = std::filesystem::canonical(pattern, ec);
  if (ec) path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

}  // namespace cordon::test_support
