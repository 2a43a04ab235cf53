#include "config/diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

namespace cordon::config {

Error ConfigError(std::string_view source, std::string_view pointer, std::string_view message) {
  std::string text = pointer.empty() ? fmt::format("{}: {}", source, message)
                                     : fmt::format("{}: {}: {}", source, pointer, message);
  return Error{ErrorCode::kConfig, 0, std::move(text)};
}

std::string PointerAppend(std::string_view pointer, std::string_view token) {
  std::string out(pointer);
  out += '/';
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PointerAppend(std::string_view pointer, std::size_t index) {
  return fmt::format("{}/{}", pointer, index);
}

std::string Quote(std::string_view text, std::size_t max_chars) {
  bool shortened = text.size() > max_chars;
  std::string head(text.substr(0, std::min(text.size(), max_chars)));
  // Cutting may split a UTF-8 sequence; "replace" keeps dump() from throwing on it.
  std::string quoted = nlohmann::json(head).dump(-1, ' ', /*ensure_ascii=*/true,
                                                 nlohmann::json::error_handler_t::replace);
  if (shortened) quoted.insert(quoted.size() - 1, "...");
  return quoted;
}

std::string DescribeJson(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      return Quote(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return value.dump();
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded:
      return "an unreadable value";
  }
  return "an unreadable value";
}

std::string QuoteList(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += Quote(name);
  }
  return out;
}

namespace {

// Levenshtein distance, two rows. Names here are short (< 30 chars).
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1);
  std::vector<std::size_t> current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

std::string_view ClosestName(std::string_view name, std::span<const std::string_view> known) {
  if (name.size() > 64) return {};
  std::string_view best;
  std::size_t best_distance = 0;
  for (std::string_view candidate : known) {
    std::size_t distance = EditDistance(name, candidate);
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  // A third of the name, at least 2: "writeable_roots" -> "writable_roots", but "foo" is not
  // offered "mode".
  std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  return best_distance <= limit ? best : std::string_view();
}

}  // namespace cordon::config
