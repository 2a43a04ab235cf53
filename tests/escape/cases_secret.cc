// Secret reads: the credential locations under the caller's HOME, reached directly and through
// links, `..`, /proc and file handles; /etc/shadow as root. A read counts when the secret's
// content reaches the caller (the output of the run) — that is where a model would see it.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "escape_cases.h"

namespace cordon::escape_test {
namespace {

// Credential files under HOME that cordon hides (docs/sandbox-linux.md, "hidden paths").
const char* const kCredentials[] = {
    ".ssh/id_ed25519",
    ".gnupg/private-keys-v1.d/key.key",
    ".aws/credentials",
    ".azure/msal_token_cache.json",
    ".config/gcloud/credentials.db",
    ".kube/config",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".config/gh/hosts.yml",
    ".config/cordon/config.json",
    ".config/github-copilot/apps.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
};

std::string SecretOf(const Fixture& f, const std::string& relative) {
  return "SECRET-" + f.token + "-" + relative + "-END";
}

void PlantSecrets(Fixture& f) {
  for (const char* relative : kCredentials) {
    WriteFile(f.home / relative, SecretOf(f, relative) + "\n");
  }
}

std::function<bool(const Fixture&)> Leaked(std::string relative) {
  return [relative](const Fixture& f) {
    return f.output.find(SecretOf(f, relative)) != std::string::npos;
  };
}

std::string Hex(const unsigned char* data, unsigned size) {
  std::string text;
  char byte[3];
  for (unsigned i = 0; i < size; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", data[i]);
    text += byte;
  }
  return text;
}

// The file handle of the ssh key, computed on the host: open_by_handle_at resolves it without
// any path, so no mount over the path can hide it.
void HandleOfKey(Fixture& f) {
  PlantSecrets(f);
  unsigned char storage[sizeof(file_handle) + MAX_HANDLE_SZ] = {};
  auto* handle = reinterpret_cast<file_handle*>(storage);
  handle->handle_bytes = MAX_HANDLE_SZ;
  int mount_id = 0;
  const auto key = f.home / ".ssh/id_ed25519";
  if (::name_to_handle_at(AT_FDCWD, key.c_str(), handle, &mount_id, 0) != 0) {
    f.not_applicable = "the filesystem of the base directory has no file handles";
    return;
  }
  f.vars["HANDLE_TYPE"] = std::to_string(handle->handle_type);
  f.vars["HANDLE_HEX"] = Hex(handle->f_handle, handle->handle_bytes);
}

}  // namespace

std::vector<Case> SecretCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string script, std::string secret,
                 std::function<void(Fixture&)> setup = PlantSecrets) {
    Case c;
    c.category = "secret";
    c.name = std::move(name);
    c.script = std::move(script);
    c.landed = Leaked(std::move(secret));
    c.setup = std::move(setup);
    cases.push_back(std::move(c));
    return &cases.back();
  };
  for (const char* relative : kCredentials) {
    std::string name = relative;
    for (char& ch : name) {
      if (ch == '/') ch = '-';
    }
    if (name[0] == '.') name.erase(0, 1);
    add("home-" + name, std::string("cat @HOME@/") + relative, relative);
  }
  const std::string key = ".ssh/id_ed25519";
  add("symlink-created-inside", "ln -s @HOME@/.ssh @WS@/ssh && cat @WS@/ssh/id_ed25519", key);
  add("symlink-planted-before-run", "cat @WS@/planted/id_ed25519", key, [](Fixture& f) {
    PlantSecrets(f);
    std::filesystem::create_symlink(f.home / ".ssh", f.ws / "planted");
  });
  add("dot-dot-from-workspace", "cat @WS@/../home/.ssh/id_ed25519", key);
  add("proc-self-root", "cat /proc/self/root@HOME@/.ssh/id_ed25519", key);
  add("proc-1-root", "cat /proc/1/root@HOME@/.ssh/id_ed25519", key, [](Fixture& f) {
    PlantSecrets(f);
    std::error_code ec;
    const auto root = std::filesystem::read_symlink("/proc/1/root", ec);
    if (ec) f.not_applicable = "PID 1's root is not reachable from this host's root";
  })->needs_root = true;
  add("cwd-of-host-process", "cat /proc/@VICTIM@/cwd/id_ed25519", key, [](Fixture& f) {
    PlantSecrets(f);
    StartVictim(f, {}, f.home / ".ssh");
  });
  // A hidden path that is a symlink is masked at its target, wherever that lies.
  add("symlinked-netrc-target", "cat @OUT@/dotfiles-netrc", ".netrc", [](Fixture& f) {
    PlantSecrets(f);
    std::filesystem::remove(f.home / ".netrc");
    WriteFile(f.out / "dotfiles-netrc", SecretOf(f, ".netrc") + "\n");
    std::filesystem::create_symlink(f.out / "dotfiles-netrc", f.home / ".netrc");
  });
  // Credentials that appear on the host while the command runs (a login during the run): a
  // mask decided at planning time from what existed then does not cover them.
  add("credentials-created-during-run", "sleep 1.5; cat @HOME@/.aws/credentials",
      ".aws/credentials", [](Fixture& f) {
        const auto file = f.home / ".aws/credentials";
        StartHostHelper(f, {"/bin/sh", "-c",
                            "sleep 0.5; mkdir -p '" + file.parent_path().string() + "' && echo '" +
                                SecretOf(f, ".aws/credentials") + "' > '" + file.string() + "'"});
      });
  // Secrets no list names (decision 0040: the home is hidden by default): a tool's token under
  // ~/.config, another project's .env, shell history, and one the host writes during the run.
  auto plant_unlisted = [](const char* relative) {
    return [relative](Fixture& f) {
      PlantSecrets(f);
      WriteFile(f.home / relative, SecretOf(f, relative) + "\n");
    };
  };
  for (const char* relative :
       {".config/sometool/token.json", "other-project/.env", ".bash_history"}) {
    std::string name = relative;
    for (char& ch : name) {
      if (ch == '/' || ch == '.') ch = '-';
    }
    if (name[0] == '-') name.erase(0, 1);
    add("unlisted-" + name, std::string("cat @HOME@/") + relative, relative,
        plant_unlisted(relative));
  }
  add("unlisted-found-by-a-walk",
      "find @HOME@ -type f 2>/dev/null | while read f; do cat \"$f\" 2>/dev/null; done",
      "other-project/.env", plant_unlisted("other-project/.env"));
  add("unlisted-created-during-run", "sleep 1.5; cat @HOME@/.late-token", ".late-token",
      [](Fixture& f) {
        PlantSecrets(f);
        const auto file = f.home / ".late-token";
        StartHostHelper(
            f, {"/bin/sh", "-c",
                "sleep 0.5; echo '" + SecretOf(f, ".late-token") + "' > '" + file.string() + "'"});
      });
  add("read-only-mode", "cat @HOME@/.aws/credentials", ".aws/credentials")->mode =
      SandboxMode::kReadOnly;
  add("network-allow", "cat @HOME@/.aws/credentials", ".aws/credentials")->network =
      NetworkPolicy::kAllow;
  add("open-by-handle", "@BIN@ by-handle @HANDLE_TYPE@ @HANDLE_HEX@", key, HandleOfKey)
      ->needs_root = true;

  Case shadow;
  shadow.category = "secret";
  shadow.name = "etc-shadow-as-root";
  shadow.script = "cat /etc/shadow";
  shadow.needs_root = true;
  shadow.landed = [](const Fixture& f) {
    const std::string content = ReadFile("/etc/shadow");
    const std::string first = content.substr(0, content.find('\n'));
    return !first.empty() && f.output.find(first) != std::string::npos;
  };
  cases.push_back(std::move(shadow));
  return cases;
}

}  // namespace cordon::escape_test
