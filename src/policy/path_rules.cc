// Rules about what a command's path operands name: recursive deletion of / and friends, and
// writes to devices under /dev. Paths are normalised lexically (// . ..); symlinks cannot be
// resolved from text, which is one reason the sandbox, not this rule, is the boundary.
#include <array>
#include <string>
#include <vector>

#include "policy/default_rules.h"

namespace cordon::policy {
namespace {

// Collapses "//", "/./" and "x/.." of an absolute path; keeps a trailing "/*".
std::string LexicalNormal(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < path.size()) {
    std::size_t slash = path.find('/', i);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view part = path.substr(i, slash - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = slash + 1;
  }
  std::string out;
  for (std::string_view p : parts) {
    out += '/';
    out.append(p);
  }
  return out.empty() ? "/" : out;
}

// "", "/", "/*", "/.": what follows ~ or $HOME in a target that means the whole home.
bool IsWholeDirectorySuffix(std::string_view rest) {
  return rest.empty() || LexicalNormal(rest) == "/" || LexicalNormal(rest) == "/*";
}

// "/", "/*", a top-level directory ("/usr", "/home", "/u*"), or the home directory.
bool IsRootLikeTarget(const Word& w) {
  std::string_view t = w.text;
  if (t.starts_with("~")) {  // ~ or ~user, alone or followed by /, /*
    std::size_t slash = t.find('/');
    return IsWholeDirectorySuffix(slash == std::string_view::npos ? "" : t.substr(slash));
  }
  for (std::string_view home : {"$HOME", "${HOME}"}) {
    if (t.starts_with(home)) {
      std::string_view rest = t.substr(home.size());
      if (rest.empty() || rest[0] == '/') return IsWholeDirectorySuffix(rest);
    }
  }
  if (!t.starts_with("/")) return false;
  std::string n = LexicalNormal(t);
  const std::size_t second = n.find('/', 1);
  if (second == std::string::npos) return true;  // "/" or one component
  // A glob directly under a top-level directory (/usr/*, /etc/*), but not under /tmp, the
  // sandbox's private scratch space.
  return n.compare(second, std::string::npos, "/*") == 0 && n.compare(0, second, "/tmp") != 0;
}

constexpr std::array<std::string_view, 10> kHarmlessDevices = {
    "/dev/null",  "/dev/zero",   "/dev/full",   "/dev/random", "/dev/urandom",
    "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty",    "/dev/ptmx"};
constexpr std::array<std::string_view, 6> kHarmlessDeviceDirs = {
    "/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/tcp/", "/dev/udp/", "/dev/mqueue/"};

// Three or more ".." and nothing else (a trailing "/" or "/*" aside): wherever the command
// runs, that climbs to a directory far above its project, / itself from most of them.
bool IsParentChain(std::string_view t) {
  int up = 0;
  std::size_t i = 0;
  while (i < t.size()) {
    std::size_t slash = t.find('/', i);
    if (slash == std::string_view::npos) slash = t.size();
    const std::string_view part = t.substr(i, slash - i);
    if (part == "..") {
      ++up;
    } else if (!(part.empty() || part == "." || (part == "*" && slash == t.size()))) {
      return false;
    }
    i = slash + 1;
  }
  return up >= 3;
}

// What `w` reaches: relative to the directory an earlier `cd` of the same text named
// (Command::known_cwd) when there is one; a long chain of ".." counts as reaching /.
bool ReachesRootLike(const Word& w, const std::string& known_cwd) {
  if (IsRootLikeTarget(w)) return true;
  const std::string& t = w.text;
  if (t.empty() || t.starts_with("/") || t.starts_with("~") || t.starts_with("$")) return false;
  if (IsParentChain(t)) return true;
  if (known_cwd.empty()) return false;
  return IsRootLikeTarget(Word{known_cwd + "/" + t, w.flags});
}

bool IsDevicePath(std::string_view path) {
  if (!path.starts_with("/")) return false;
  std::string n = LexicalNormal(path);
  if (!n.starts_with("/dev/")) return false;
  for (std::string_view d : kHarmlessDevices) {
    if (n == d) return false;
  }
  for (std::string_view d : kHarmlessDeviceDirs) {
    if (n.starts_with(d)) return false;
  }
  return true;
}

bool IsRecursiveFlag(std::string_view a) {
  if (a == "--recursive") return true;
  if (a.size() < 2 || a[0] != '-' || a[1] == '-') return false;
  return a.find_first_of("rR") != std::string_view::npos;
}

}  // namespace

std::optional<RuleHit> CheckRmRoot(const Command& c) {
  if (NameIs(c.argv[0], "rm")) {
    bool recursive = false;
    bool options = true;
    std::vector<const Word*> targets;
    for (std::size_t i = 1; i < c.argv.size(); ++i) {
      std::string_view a = c.argv[i].text;
      if (options && a == "--") {
        options = false;
      } else if (options && a == "--no-preserve-root") {
        return MakeHit(rule::kRmRoot, "rm --no-preserve-root");
      } else if (options && a.size() > 1 && a[0] == '-') {
        recursive = recursive || IsRecursiveFlag(a);
      } else {
        targets.push_back(&c.argv[i]);
      }
    }
    if (!recursive) return std::nullopt;
    for (const Word* t : targets) {
      if (ReachesRootLike(*t, c.known_cwd)) {
        return MakeHit(rule::kRmRoot,
                       "rm -r " + t->text + (c.known_cwd.empty() ? "" : " in " + c.known_cwd));
      }
    }
    return std::nullopt;
  }
  if (NameIs(c.argv[0], "find")) {
    bool deletes = false;
    const Word* root_like = nullptr;
    bool in_paths = true;
    for (std::size_t i = 1; i < c.argv.size(); ++i) {
      std::string_view a = c.argv[i].text;
      if (a.starts_with("-") || a == "(" || a == "!") in_paths = false;
      if (in_paths && ReachesRootLike(c.argv[i], c.known_cwd)) root_like = &c.argv[i];
      if (a == "-delete") deletes = true;
      // -exec rm {} + and its kin: what find runs, on everything it finds.
      const bool runs = a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir";
      if (runs && i + 1 < c.argv.size()) {
        const Word& program = c.argv[i + 1];
        if (NameIs(program, "rm") || NameIs(program, "unlink") || NameIs(program, "shred")) {
          deletes = true;
        }
      }
    }
    if (deletes && root_like != nullptr) {
      return MakeHit(rule::kRmRoot, "find " + root_like->text + " deleting what it finds");
    }
  }
  return std::nullopt;
}

std::optional<RuleHit> CheckDeviceWrite(const Command& c) {
  for (const Redirect& r : c.redirects) {
    if (r.Writes() && IsDevicePath(r.target.text)) {
      return MakeHit(rule::kDeviceWrite, "redirection to " + r.target.text);
    }
  }
  if (c.argv.empty() || c.query_only) return std::nullopt;
  const Word& w = c.argv[0];
  if (NameIs(w, "dd")) {
    for (std::size_t i = 1; i < c.argv.size(); ++i) {
      std::string_view a = c.argv[i].text;
      if (a.starts_with("of=") && IsDevicePath(a.substr(3))) {
        return MakeHit(rule::kDeviceWrite, "dd " + std::string(a));
      }
    }
  }
  if (NameIs(w, "tee") || NameIs(w, "shred")) {
    for (std::size_t i = 1; i < c.argv.size(); ++i) {
      if (IsDevicePath(c.argv[i].text)) {
        return MakeHit(rule::kDeviceWrite, std::string(c.name()) + " " + c.argv[i].text);
      }
    }
  }
  if ((NameIs(w, "cp") || NameIs(w, "install") || NameIs(w, "pv")) && c.argv.size() > 2 &&
      IsDevicePath(c.argv.back().text)) {
    return MakeHit(rule::kDeviceWrite, std::string(c.name()) + " ... " + c.argv.back().text);
  }
  return std::nullopt;
}

}  // namespace cordon::policy
