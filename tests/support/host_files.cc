#include "support/host_files.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

namespace cordon::test_support {

bool MustWork() {
  const char* value = std::getenv("CORDON_TEST_MUST_WORK");
  return value != nullptr && std::string_view(value) == "1";
}

bool Exists(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

void WriteFile(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

}  // namespace cordon::test_support
