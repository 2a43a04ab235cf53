// The policy corpus files (corpus/allowed.txt, corpus/denied.txt) read as lines of fields.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace cordon::policy {

struct CorpusLine {
  int line = 0;
  std::vector<std::string> fields;  // tab-separated
};

// Lines are TAB-separated; "\n" in the command field stands for a newline. Blank lines and
// lines starting with "#" are skipped.
inline std::vector<CorpusLine> ReadCorpus(const std::string& name) {
  std::ifstream in(std::string(CORDON_POLICY_CORPUS_DIR) + "/" + name);
  EXPECT_TRUE(in.good()) << "cannot open " << name;
  std::vector<CorpusLine> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    CorpusLine c;
    c.line = n;
    std::size_t start = 0;
    for (;;) {
      std::size_t tab = line.find('\t', start);
      c.fields.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    std::string& cmd = c.fields[0];
    for (std::size_t p = cmd.find("\\n"); p != std::string::npos; p = cmd.find("\\n", p + 1)) {
      cmd.replace(p, 2, "\n");
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace cordon::policy
