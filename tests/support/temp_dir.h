// A fresh directory for one test (canonical, so that expectations match what realpath and the
// kernel report), removed with everything in it when the object dies.
#pragma once

#include <filesystem>

namespace cordon::test_support {

class TempDir {
 public:
  explicit TempDir(const std::filesystem::path& parent = std::filesystem::temp_directory_path());
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace cordon::test_support
