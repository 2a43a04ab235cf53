// Golden files: the expected output of a renderer, checked in under golden/. Set
// CORDON_UPDATE_GOLDEN=1 to rewrite them from the current output (then review the diff).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace cordon::testing {

inline void ExpectMatchesGolden(const std::string& actual, const std::string& name) {
  const std::string path = std::string(CORDON_GOLDEN_DIR) + "/" + name;
  if (const char* update = std::getenv("CORDON_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (CORDON_UPDATE_GOLDEN=1 creates it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "differs from " << path;
}

}  // namespace cordon::testing
