// The sandboxed command's environment: an allow-list, never a deny-list. Secrets in the
// caller's environment have arbitrary names (DATABASE_URL, INTERNAL_SERVICE_PASSWORD), so only
// names known to be harmless, or named by the user, are copied.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/config.h"

namespace cordon::plan {

// PATH used when the caller has none.
inline constexpr std::string_view kDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The host's extra certificate authorities, which TLS clients behind a corporate proxy need:
// SSL_CERT_FILE, SSL_CERT_DIR, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE,
// GIT_SSL_CAINFO. Paths to public certificates, never secrets.
bool IsCertificateName(std::string_view name);

// True for the names copied from the caller without configuration: PATH, TERM, LANG, LANGUAGE,
// LC_*, TZ, COLORTERM, NO_COLOR, the toolchain names (IsToolchainName) and the certificate
// names (IsCertificateName).
bool IsDefaultPassedName(std::string_view name);

// Builds "NAME=value" entries, sorted by name, each name once:
//   1. allowed names (IsDefaultPassedName or config.pass) copied from `caller_env`
//      (the first occurrence of a name wins, as getenv does); PATH defaults to kDefaultPath;
//      then each of `defaults` ("NAME=value": the toolchain pointers) whose name is still unset;
//   2. config.set values (override 1);
//   3. HOME=`home`, TMPDIR=`tmpdir`, CORDON_SANDBOX=1 and each of `sandbox_facts`
//      ("NAME=value": SandboxFacts) (override everything: the private directories are part of
//      the sandbox, nested cordon reads CORDON_SANDBOX, and scripts adapt to the facts).
// Entries of `caller_env` without '=' are ignored.
std::vector<std::string> BuildEnvironment(const std::vector<std::string>& caller_env,
                                          const EnvironmentConfig& config,
                                          const std::filesystem::path& home,
                                          const std::filesystem::path& tmpdir,
                                          const std::vector<std::string>& defaults = {},
                                          const std::vector<std::string>& sandbox_facts = {});

// What a command may want to know of its sandbox to adapt (issue 25): CORDON_SANDBOX_MODE
// (read_only, workspace_write), CORDON_SANDBOX_NETWORK and its short name CORDON_NETWORK (deny,
// allow, domains), CORDON_SANDBOX_HOME (hidden, read_only: what the real homes show); with
// network "domains" also the proxy variables that name the sandbox's proxy
// (net::ProxyEnvironment).
std::vector<std::string> SandboxFacts(SandboxMode mode, NetworkPolicy network, HomeView home);

}  // namespace cordon::plan
