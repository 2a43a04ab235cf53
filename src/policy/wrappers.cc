#include "policy/wrappers.h"

#include <algorithm>
#include <array>
#include <optional>

#include "policy/space_list.h"

namespace cordon::policy {
namespace {

struct WrapperSpec {
  std::string_view name;
  std::string_view value_short;  // short options taking a value (attached or the next word)
  std::string_view value_long;   // " --a --b ": long options taking the next word as value
  int operands = 0;              // operands before the command (timeout's DURATION)
  bool assignments = false;      // env: NAME=value operands, and "-" meaning -i
  bool shell_string = false;     // watch, parallel: the operands are joined and run by sh -c
  std::string_view subcommands;  // " run ": only `uv run CMD` wraps, not `uv pip ...`
};

// Option tables from each tool's manual page. An option missing here makes the wrapper's next
// word look like the command: a false match, never a missed one, for options without values.
constexpr std::array<WrapperSpec, 35> kWrappers = {{
    {"env", "uCS", " --unset --chdir --split-string ", 0, true, false, ""},
    {"exec", "a", "", 0, false, false, ""},
    {"nice", "n", " --adjustment ", 0, false, false, ""},
    {"nohup", "", "", 0, false, false, ""},
    {"timeout", "ks", " --kill-after --signal ", 1, false, false, ""},
    {"time", "fo", " --format --output ", 0, false, false, ""},
    {"stdbuf", "ioe", " --input --output --error ", 0, false, false, ""},
    {"xargs", "adEIsLnP",
     " --arg-file --delimiter --max-chars --max-lines --max-args --max-procs "
     "--process-slot-var ",
     0, false, false, ""},
    {"ionice", "cn", " --class --classdata ", 0, false, false, ""},
    {"setsid", "", "", 0, false, false, ""},
    {"chrt", "TPD", " --sched-runtime --sched-period --sched-deadline ", 1, false, false, ""},
    {"taskset", "", "", 1, false, false, ""},
    {"unbuffer", "", "", 0, false, false, ""},
    {"builtin", "", "", 0, false, false, ""},
    {"busybox", "", "", 0, false, false, ""},
    {"toybox", "", "", 0, false, false, ""},
    {"fakeroot", "si", " --faked --lib ", 0, false, false, ""},
    {"chroot", "", " --userspec --groups ", 1, false, false, ""},
    {"strace", "oeEpsuIaSXPbO", "", 0, false, false, ""},
    {"ltrace", "oeEpsunaA", "", 0, false, false, ""},
    {"flock", "wE", " --timeout --conflict-exit-code ", 1, false, false, ""},
    {"catchsegv", "", "", 0, false, false, ""},
    {"watch", "nd", " --interval ", 0, false, true, ""},
    {"parallel", "jSnNIdCaE",
     " --jobs --sshlogin --max-args --max-replace-args --delimiter --colsep --arg-file --eof "
     "--joblog --results --tmpdir --workdir --timeout ",
     0, false, true, ""},
    {"npx", "p", " --package ", 0, false, false, ""},
    {"bunx", "", "", 0, false, false, ""},
    {"uvx", "pw", " --from --with --python ", 0, false, false, ""},
    {"pipx", "", " --spec --python ", 0, false, false, " run "},
    {"uv", "pw",
     " --with --python --directory --project --env-file --extra --group --package --index "
     "--from --with-requirements ",
     0, false, false, " run "},
    {"poetry", "", " --directory ", 0, false, false, " run "},
    {"pipenv", "", "", 0, false, false, " run "},
    {"pdm", "", "", 0, false, false, " run "},
    {"bundle", "", "", 0, false, false, " exec "},
    {"pnpm", "", "", 0, false, false, " exec dlx "},
    {"conda", "np", " --name --prefix --cwd ", 0, false, false, " run "},
}};

const WrapperSpec* FindWrapper(std::string_view name) {
  for (const WrapperSpec& w : kWrappers) {
    if (w.name == name) return &w;
  }
  if (name == "mamba" || name == "micromamba") return FindWrapper("conda");
  if (name == "yarn") return FindWrapper("pnpm");
  return nullptr;
}

// Returns the index of the first word after the wrapper's options and operands.
std::size_t SkipOptions(const WrapperSpec& spec, const std::vector<Word>& words, std::size_t j) {
  const std::size_t n = words.size();
  while (j < n) {
    const std::string& a = words[j].text;
    if (spec.assignments && (IsAssignment(words[j]) || a == "-")) {
      ++j;
      continue;
    }
    if (a == "--") {
      ++j;
      break;
    }
    if (a.size() < 2 || a[0] != '-') break;
    if (a[1] == '-') {
      bool has_value = a.find('=') == std::string::npos && InSpaceList(spec.value_long, a);
      j += has_value ? 2 : 1;
      continue;
    }
    bool takes_next = false;
    for (std::size_t k = 1; k < a.size(); ++k) {
      if (spec.value_short.find(a[k]) != std::string_view::npos) {
        takes_next = k + 1 == a.size();
        break;
      }
    }
    j += takes_next ? 2 : 1;
  }
  for (int o = 0; o < spec.operands && j < n; ++o) ++j;
  return std::min(j, n);  // an option whose value is missing ends the words
}

// The operands a wrapper hands to sh -c, up to parallel's ":::" argument separators.
std::string JoinTexts(const std::vector<Word>& words, std::size_t from) {
  std::string out;
  for (std::size_t i = from; i < words.size(); ++i) {
    if (words[i].text.starts_with(":::")) break;
    if (i > from) out += ' ';
    out += words[i].text;
  }
  return out;
}

// env -S 'a b c' (--split-string) splits its value into words; they replace the option so the
// command inside is seen.
void SplitEnvString(std::vector<Word>& words, std::size_t env_index) {
  for (std::size_t j = env_index + 1; j < words.size(); ++j) {
    const std::string& a = words[j].text;
    if (a.size() < 2 || a[0] != '-' || a == "--") return;
    std::string value;
    std::size_t consumed = 1;
    if ((a == "-S" || a == "--split-string") && j + 1 < words.size()) {
      value = words[j + 1].text;
      consumed = 2;
    } else if (a.starts_with("--split-string=")) {
      value = a.substr(15);
    } else if (a.starts_with("-S")) {
      value = a.substr(2);
    } else {
      continue;
    }
    std::vector<Word> split;
    std::size_t i = 0;
    while (i < value.size()) {
      std::size_t end = value.find_first_of(" \t", i);
      if (end == std::string::npos) end = value.size();
      if (end > i) split.push_back(Word{value.substr(i, end - i), words[j].flags});
      i = end + 1;
    }
    auto at = words.begin() + static_cast<std::ptrdiff_t>(j);
    words.erase(at, at + static_cast<std::ptrdiff_t>(consumed));
    words.insert(words.begin() + static_cast<std::ptrdiff_t>(j), split.begin(), split.end());
    return;
  }
}

}  // namespace

std::string_view Basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || path.size() == 1) return path;
  return path.substr(slash + 1);
}

bool IsAssignment(const Word& word) {
  const std::string& t = word.text;
  std::size_t eq = t.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  std::size_t name_end = eq;
  if (t[eq - 1] == '+') --name_end;
  std::size_t bracket = t.find('[');
  if (bracket != std::string::npos && bracket < name_end && t[name_end - 1] == ']') {
    name_end = bracket;
  }
  if (name_end == 0) return false;
  for (std::size_t i = 0; i < name_end; ++i) {
    char c = t[i];
    bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> ExpandBraces(const std::string& text) {
  std::size_t open = text.find('{');
  if (open == std::string::npos) return {text};
  int depth = 0;
  std::vector<std::size_t> commas;
  std::size_t close = std::string::npos;
  for (std::size_t i = open; i < text.size() && close == std::string::npos; ++i) {
    if (text[i] == '{') {
      ++depth;
    } else if (text[i] == '}') {
      if (--depth == 0) close = i;
    } else if (text[i] == ',' && depth == 1) {
      commas.push_back(i);
    }
  }
  if (close == std::string::npos || commas.empty()) return {text};
  const std::size_t fixed = open + (text.size() - close - 1);
  if ((commas.size() + 1) * fixed + text.size() > kMaxBraceBytes) return {};
  std::vector<std::string> out;
  std::size_t begin = open + 1;
  commas.push_back(close);
  for (std::size_t c : commas) {
    out.push_back(text.substr(0, open) + text.substr(begin, c - begin) + text.substr(close + 1));
    begin = c + 1;
  }
  return out;
}

namespace {

// The shell text `script -c TEXT` (also -qc, -cTEXT, --command TEXT, --command=TEXT) or `flock
// FILE -c TEXT` runs through a shell; nullopt for another command or without the option.
// `with_value`: the short options whose value is the rest of the cluster or the next word.
std::optional<std::string> CommandStringOption(std::string_view name,
                                               const std::vector<Word>& words, std::size_t i) {
  std::string_view with_value;
  if (name == "script") {
    with_value = "EIOBTm";
  } else if (name == "flock") {
    with_value = "wE";
  } else {
    return std::nullopt;
  }
  for (std::size_t j = i + 1; j < words.size(); ++j) {
    const std::string& w = words[j].text;
    if (w == "--") return std::nullopt;
    if (w == "--command") return j + 1 < words.size() ? std::optional(words[j + 1].text) : "";
    if (w.starts_with("--command=")) return w.substr(10);
    if (w.size() < 2 || w[0] != '-' || w[1] == '-') continue;
    for (std::size_t k = 1; k < w.size(); ++k) {
      if (w[k] == 'c') {
        if (k + 1 < w.size()) return w.substr(k + 1);
        return j + 1 < words.size() ? std::optional(words[j + 1].text) : "";
      }
      if (with_value.find(w[k]) != std::string_view::npos) {
        if (k + 1 == w.size()) ++j;  // the value is the next word
        break;
      }
    }
  }
  return std::nullopt;
}

// xargs's replace string among its options words[from, to): -I STR, -ISTR, -i[STR] and
// --replace[=STR] (the last two default to {}). Empty: none.
std::string XargsReplace(const std::vector<Word>& words, std::size_t from, std::size_t to) {
  std::string replace;
  const std::size_t end = std::min(to, words.size());
  for (std::size_t k = from; k < end; ++k) {
    const std::string& w = words[k].text;
    if (w == "-I" && k + 1 < end) {
      replace = words[++k].text;
    } else if (w.starts_with("-I")) {
      replace = w.substr(2);
    } else if (w.starts_with("-i")) {
      replace = w.size() > 2 ? w.substr(2) : "{}";
    } else if (w == "--replace") {
      replace = "{}";
    } else if (w.starts_with("--replace=")) {
      replace = w.substr(10);
    }
  }
  return replace;
}

}  // namespace

Unwrapped Unwrap(std::vector<Word> words) {
  Unwrapped out;
  std::size_t i = 0;
  std::size_t last_wrapper = std::string::npos;
  bool braces_done = false;
  for (;;) {
    while (i < words.size() && IsAssignment(words[i])) ++i;
    if (i >= words.size()) break;
    if (words[i].Has(kWordBrace) && !braces_done) {
      braces_done = true;  // one expansion: {a,b}{c,d} is not multiplied out
      std::vector<std::string> alternatives = ExpandBraces(words[i].text);
      if (alternatives.empty()) {
        out.too_complex = true;
        break;
      }
      std::vector<Word> expanded;
      for (std::string& alt : alternatives)
        expanded.push_back(Word{std::move(alt), words[i].flags});
      words.erase(words.begin() + static_cast<std::ptrdiff_t>(i));
      words.insert(words.begin() + static_cast<std::ptrdiff_t>(i), expanded.begin(),
                   expanded.end());
      continue;
    }
    std::string_view name = Basename(words[i].text);
    if (name == "command") {
      std::size_t j = i + 1;
      for (; j < words.size() && words[j].text.size() > 1 && words[j].text[0] == '-'; ++j) {
        if (words[j].text.find_first_of("vV") != std::string::npos) out.query_only = true;
      }
      if (out.query_only) break;
      last_wrapper = i;
      i = j;
      continue;
    }
    if (std::optional<std::string> text = CommandStringOption(name, words, i)) {
      out.shell_text = std::move(*text);
      break;
    }
    const WrapperSpec* spec = FindWrapper(name);
    if (spec == nullptr) break;
    if (spec->assignments) SplitEnvString(words, i);
    if (spec->name == "xargs" || spec->name == "parallel") out.args_from_stdin = true;
    std::size_t j = i + 1;
    if (!spec->subcommands.empty()) {
      if (j >= words.size() || !InSpaceList(spec->subcommands, words[j].text)) break;
      ++j;
    }
    j = SkipOptions(*spec, words, j);
    if (spec->name == "xargs") out.stdin_replace = XargsReplace(words, i + 1, j);
    if (spec->shell_string) {
      out.shell_text = JoinTexts(words, j);
      break;
    }
    last_wrapper = i;
    i = j;
  }
  if (i >= words.size() && last_wrapper != std::string::npos) i = last_wrapper;
  out.argv.assign(std::make_move_iterator(words.begin() + static_cast<std::ptrdiff_t>(i)),
                  std::make_move_iterator(words.end()));
  return out;
}

}  // namespace cordon::policy
