// A home's tree mounted a second time elsewhere — a bind of /home into /srv/homes, a container
// volume showing /root — shows the same files at another path. The hidden home (decision 0038)
// hides paths, so each such place is found in the mount table and hidden as well; a writable
// root that is, or holds, one would make the home writable and is refused (decision 0040).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::plan {

// One line of /proc/self/mountinfo: the file system ("major:minor"), the directory of it the
// mount shows (its root), and where it is mounted.
struct MountEntry {
  std::string device;
  std::filesystem::path root;
  std::filesystem::path mount_point;
  bool read_only = false;  // the mount's own options (mountinfo field 6) hold "ro"
};

// The entries of a mountinfo text, in order; octal escapes (\040 for a space) decoded; lines
// that do not parse are skipped.
std::vector<MountEntry> ParseMountInfo(std::string_view text);

// /proc/self/mountinfo parsed; empty when it cannot be read (nothing is then known to alias).
std::vector<MountEntry> ReadMountTable();

// Another place where the contents of a directory can be reached.
struct Alias {
  std::filesystem::path path;
  bool whole = false;  // all of the directory is there; else a part of it (a bind of ~/proj)
  std::filesystem::path shows;  // the directory shown there, by its own path
};

// The other places where the contents of `dir` (canonical) can be reached: for each mount of
// the file system `dir` lies on, other than the one that shows `dir` at its own path, where it
// shows `dir` (its root holds dir: the alias is that directory under its mount point), or the
// mount point itself when it shows part of `dir`. `dir` itself is left out; places inside it
// are not (a bind of / or /home inside a workspace in the home shows the home again).
std::vector<Alias> AliasesOf(const std::filesystem::path& dir,
                             const std::vector<MountEntry>& mounts);

// The first place where one of `dirs`, or a part of it that lies in no root, is mounted a
// second time inside one of `roots` (through it the root would show, or let the command write,
// what the view keeps out: a bind of /home, of ~/.config). A part that lies in a root anyway,
// or whose second mount is the root itself (a project of the home bound as the workspace), is
// not one.
struct AliasInRoot {
  std::filesystem::path alias, dir, root;
};
std::optional<AliasInRoot> FindAliasInRoots(const std::vector<std::filesystem::path>& dirs,
                                            const std::vector<std::filesystem::path>& roots,
                                            const std::vector<MountEntry>& mounts);

}  // namespace cordon::plan
