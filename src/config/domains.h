// The domain lists of network "domains" as a person writes them — patterns and "@name"
// references to the named lists in sandbox.domain_lists — turned into the canonical, expanded
// lists SandboxConfig holds (docs/config.md). The file and the command line share this, so an
// "@js" means the same list in both.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

using DomainLists = std::map<std::string, std::vector<std::string>>;

// One entry of sandbox.domains.allow/deny or of --allow-domain/--deny-domain: a pattern, as
// its canonical text, or "@name", as the canonical patterns of that list. kInvalidArgument
// naming the entry (callers add where it was written): an invalid pattern, an unknown list.
[[nodiscard]] Result<std::vector<std::string>> ExpandDomainEntry(std::string_view entry,
                                                                 const DomainLists& lists);

// Appends the expansion of `entry` to `target`, dropping patterns already there.
[[nodiscard]] Result<void> AddDomainEntry(std::vector<std::string>& target, std::string_view entry,
                                          const DomainLists& lists);

// Makes config.sandbox.domain_lists canonical (list names checked, no list naming another) and
// expands allowed_domains and denied_domains against them in place, repeats dropped (first
// kept). Errors point at the entry as written: "SOURCE: /sandbox/domains/allow/2: ...".
// Idempotent.
[[nodiscard]] Result<void> NormaliseDomains(Config& config, std::string_view source);

// ValidateConfig's part: every entry of the three lists is a valid pattern (no "@name" is left
// once expanded). kConfig with the pointer of the first one that is not.
[[nodiscard]] Result<void> CheckDomains(const SandboxConfig& sandbox, std::string_view source);

}  // namespace cordon::config
