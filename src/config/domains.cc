#include "config/domains.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/diagnostics.h"
#include "net/domain_pattern.h"
#include "net/parent_proxy.h"

namespace cordon::config {
namespace {

constexpr std::string_view kListsPointer = "/sandbox/domain_lists";

// List names are what follows "@" on a command line: plain words, no quoting needed.
bool IsListName(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

Result<void> CheckListName(std::string_view source, std::string_view name) {
  if (IsListName(name)) return {};
  return FailConfig(source, PointerAppend(kListsPointer, name),
                    fmt::format("a list name is 1 to 64 letters, digits, '-', '_' or '.', found {}",
                                Quote(name)));
}

Result<std::string> Canonical(std::string_view text) {
  CORDON_TRY(net::DomainPattern pattern, net::ParseDomainPattern(text));
  return pattern.ToString();
}

void AddUnique(std::vector<std::string>& target, std::string pattern) {
  if (std::find(target.begin(), target.end(), pattern) == target.end()) {
    target.push_back(std::move(pattern));
  }
}

}  // namespace

Result<std::vector<std::string>> ExpandDomainEntry(std::string_view entry,
                                                   const DomainLists& lists) {
  if (!entry.starts_with('@')) {
    CORDON_TRY(std::string pattern, Canonical(entry));
    return std::vector<std::string>{std::move(pattern)};
  }
  const std::string name(entry.substr(1));
  if (auto it = lists.find(name); it != lists.end()) return it->second;
  std::string known;
  for (const auto& [list, patterns] : lists) known += (known.empty() ? "" : ", ") + Quote(list);
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("unknown domain list {}: {}", Quote(entry),
                          known.empty() ? std::string("sandbox.domain_lists defines no lists")
                                        : fmt::format("sandbox.domain_lists defines {}", known)));
}

Result<void> AddDomainEntry(std::vector<std::string>& target, std::string_view entry,
                            const DomainLists& lists) {
  CORDON_TRY(std::vector<std::string> patterns, ExpandDomainEntry(entry, lists));
  for (std::string& pattern : patterns) AddUnique(target, std::move(pattern));
  return {};
}

Result<void> NormaliseDomains(Config& config, std::string_view source) {
  SandboxConfig& sandbox = config.sandbox;
  DomainLists lists;
  for (const auto& [name, entries] : sandbox.domain_lists) {
    CORDON_TRY_VOID(CheckListName(source, name));
    const std::string pointer = PointerAppend(kListsPointer, name);
    std::vector<std::string>& canonical = lists[name];
    for (std::size_t i = 0; i < entries.size(); ++i) {
      // One level only: a list naming lists could loop, and its meaning would hang on order.
      if (entries[i].starts_with('@')) {
        return FailConfig(source, PointerAppend(pointer, i),
                          fmt::format("a list may not name another list ({}); write its "
                                      "patterns here",
                                      Quote(entries[i])));
      }
      Result<std::string> pattern = Canonical(entries[i]);
      if (!pattern) return FailConfig(source, PointerAppend(pointer, i), pattern.error().message);
      AddUnique(canonical, std::move(*pattern));
    }
  }
  const std::pair<const char*, std::vector<std::string>*> sides[] = {
      {"/sandbox/domains/allow", &sandbox.allowed_domains},
      {"/sandbox/domains/deny", &sandbox.denied_domains}};
  for (const auto& [pointer, written] : sides) {
    std::vector<std::string> expanded;
    for (std::size_t i = 0; i < written->size(); ++i) {
      if (Result<void> added = AddDomainEntry(expanded, (*written)[i], lists); !added) {
        return FailConfig(source, PointerAppend(pointer, i), added.error().message);
      }
    }
    *written = std::move(expanded);
  }
  sandbox.domain_lists = std::move(lists);
  return {};
}

Result<void> CheckDomains(const SandboxConfig& sandbox, std::string_view source) {
  auto check = [&](const std::vector<std::string>& patterns,
                   const std::string& pointer) -> Result<void> {
    for (std::size_t i = 0; i < patterns.size(); ++i) {
      if (Result<net::DomainPattern> parsed = net::ParseDomainPattern(patterns[i]); !parsed) {
        return FailConfig(source, PointerAppend(pointer, i), parsed.error().message);
      }
    }
    return {};
  };
  CORDON_TRY_VOID(check(sandbox.allowed_domains, "/sandbox/domains/allow"));
  CORDON_TRY_VOID(check(sandbox.denied_domains, "/sandbox/domains/deny"));
  if (Result<void> parent = net::CheckParentProxySetting(sandbox.parent_proxy); !parent) {
    return FailConfig(source, "/sandbox/parent_proxy", parent.error().message);
  }
  for (const auto& [name, patterns] : sandbox.domain_lists) {
    CORDON_TRY_VOID(CheckListName(source, name));
    CORDON_TRY_VOID(check(patterns, PointerAppend(kListsPointer, name)));
  }
  return {};
}

}  // namespace cordon::config
