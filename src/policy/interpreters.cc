#include "policy/interpreters.h"

#include <array>

#include "policy/space_list.h"

namespace cordon::policy {
namespace {

constexpr std::array<std::string_view, 16> kShells = {
    "sh",   "bash",  "dash", "zsh", "ksh",  "mksh",  "ash",  "yash",
    "posh", "rbash", "fish", "csh", "tcsh", "ksh93", "oksh", "busybox"};

// How a script interpreter's options name its program. Short options are clusters ("-uc").
struct ScriptSpec {
  std::string_view string_opts;    // the program text follows (attached or as the next word)
  std::string_view file_opts;      // a file or module follows (python -m, php -f)
  std::string_view value_next;     // take a value, attached or as the next word
  std::string_view attached_only;  // take an optional value written in the same word
  std::string_view long_string;    // space-separated long options taking program text
};

constexpr ScriptSpec kPython{"c", "m", "WX", "", ""};
constexpr ScriptSpec kPerl{"eE", "", "I", "MmxFCdDil0", ""};
constexpr ScriptSpec kRuby{"e", "", "rIC", "WKTExl0", ""};
constexpr ScriptSpec kNode{"ep", "", "r", "", " --eval --print "};
constexpr ScriptSpec kPhp{"r", "f", "cdz", "", ""};
constexpr ScriptSpec kLua{"e", "", "l", "", ""};

const ScriptSpec* FindScriptSpec(std::string_view name) {
  if (name.starts_with("python") || name.starts_with("pypy")) return &kPython;
  if (name == "perl" || name.starts_with("perl5")) return &kPerl;
  if (name == "ruby") return &kRuby;
  if (name == "node" || name == "nodejs") return &kNode;
  if (name == "php" || name.starts_with("php")) return &kPhp;
  if (name == "lua" || name == "luajit" || name.starts_with("lua5")) return &kLua;
  return nullptr;
}

bool IsShellName(std::string_view name) {
  for (std::string_view s : kShells) {
    if (name == s) return true;
  }
  return false;
}

Program ShellProgram(const std::vector<Word>& argv) {
  bool c_mode = false;
  bool s_mode = false;
  std::size_t i = 1;
  while (i < argv.size()) {
    const std::string& a = argv[i].text;
    if (a == "--" || a == "-") {
      ++i;
      break;
    }
    if (a.starts_with("--")) {
      i += (a == "--rcfile" || a == "--init-file") ? 2 : 1;
      continue;
    }
    if (a.size() < 2 || (a[0] != '-' && a[0] != '+')) break;
    bool takes_value = false;
    for (char ch : std::string_view(a).substr(1)) {
      if (ch == 'c') c_mode = true;
      if (ch == 's') s_mode = true;
      if (ch == 'o' || ch == 'O') takes_value = true;
    }
    i += takes_value ? 2 : 1;
  }
  if (c_mode) {
    if (i < argv.size()) return Program{ProgramFrom::kString, &argv[i]};
    return Program{ProgramFrom::kMissing, nullptr};
  }
  if (s_mode || i >= argv.size()) return Program{ProgramFrom::kStdin, nullptr};
  return Program{ProgramFrom::kFile, &argv[i]};
}

Program ScriptProgram(const ScriptSpec& spec, const std::vector<Word>& argv) {
  std::size_t i = 1;
  while (i < argv.size()) {
    const std::string& a = argv[i].text;
    if (a == "-") return Program{ProgramFrom::kStdin, nullptr};
    if (a == "--") {
      ++i;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;
    if (a.starts_with("--")) {
      std::string_view opt = std::string_view(a).substr(0, a.find('='));
      bool is_string = InSpaceList(spec.long_string, opt);
      if (is_string) {
        if (a.find('=') != std::string::npos) return Program{ProgramFrom::kString, &argv[i]};
        if (i + 1 < argv.size()) return Program{ProgramFrom::kString, &argv[i + 1]};
        return Program{ProgramFrom::kMissing, nullptr};
      }
      ++i;
      continue;
    }
    std::size_t advance = 1;
    for (std::size_t k = 1; k < a.size(); ++k) {
      char ch = a[k];
      bool attached = k + 1 < a.size();
      bool is_string = spec.string_opts.find(ch) != std::string_view::npos;
      bool is_file = spec.file_opts.find(ch) != std::string_view::npos;
      if (is_string || is_file) {
        ProgramFrom from = is_string ? ProgramFrom::kString : ProgramFrom::kFile;
        if (attached) return Program{from, &argv[i]};
        if (i + 1 < argv.size()) return Program{from, &argv[i + 1]};
        return Program{ProgramFrom::kMissing, nullptr};
      }
      if (spec.value_next.find(ch) != std::string_view::npos) {
        if (!attached) advance = 2;
        break;
      }
      if (spec.attached_only.find(ch) != std::string_view::npos) break;
    }
    i += advance;
  }
  if (i >= argv.size()) return Program{ProgramFrom::kStdin, nullptr};
  return Program{ProgramFrom::kFile, &argv[i]};
}

}  // namespace

InterpreterKind ClassifyInterpreter(const Word& command_word, std::string_view name) {
  if (command_word.Dynamic() && name.find('$') != std::string_view::npos) {
    return InterpreterKind::kUnknown;
  }
  if (command_word.Has(kWordCommandSub)) return InterpreterKind::kUnknown;
  if (IsShellName(name)) return InterpreterKind::kShell;
  if (FindScriptSpec(name) != nullptr) return InterpreterKind::kScript;
  return InterpreterKind::kNone;
}

Program FindProgram(InterpreterKind kind, std::string_view name, const std::vector<Word>& argv) {
  if (kind == InterpreterKind::kScript) {
    const ScriptSpec* spec = FindScriptSpec(name);
    if (spec != nullptr) return ScriptProgram(*spec, argv);
  }
  return ShellProgram(argv);
}

}  // namespace cordon::policy
