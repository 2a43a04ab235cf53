// Files on the host as a test sees them, and the switch that turns skips into failures.
#pragma once

#include <filesystem>
#include <string>

namespace cordon::test_support {

// True when CORDON_TEST_MUST_WORK=1: a missing kernel feature is then a failure, not a skip
// (CI machines known to have every feature set it).
bool MustWork();

// Whether anything (a dangling symlink too) is at `path`.
bool Exists(const std::filesystem::path& path);
// The whole file; empty when it cannot be read.
std::string ReadFile(const std::filesystem::path& path);
// Replaces the file's content (the directory must exist).
void WriteFile(const std::filesystem::path& path, const std::string& content);

}  // namespace cordon::test_support
