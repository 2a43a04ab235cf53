// DescribeOption and CommandPath: what the generators read from a CLI11 option or app.
#include <fmt/format.h>

#include "cli/manual.h"

namespace cordon::cli {
namespace {

std::vector<std::string> SplitChoices(std::string_view braces) {
  std::vector<std::string> out;
  braces.remove_prefix(1);
  braces.remove_suffix(1);
  while (!braces.empty()) {
    std::size_t comma = braces.find(',');
    out.emplace_back(braces.substr(0, comma));
    if (comma == std::string_view::npos) break;
    braces.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

OptionInfo DescribeOption(const CLI::Option& option) {
  OptionInfo info;
  for (const std::string& name : option.get_lnames()) info.names.push_back("--" + name);
  for (const std::string& name : option.get_snames()) info.names.push_back("-" + name);
  if (!option.nonpositional()) info.positional = option.get_name(true);
  info.type_name = option.get_type_name();
  info.description = option.get_description();
  info.default_value = option.get_default_str();
  info.takes_value = option.get_items_expected_max() > 0 || !info.positional.empty();
  info.repeatable = option.get_items_expected_max() > 1;
  info.required = option.get_required();
  if (!info.takes_value) {
    info.kind = ValueKind::kNone;
  } else if (info.type_name.size() >= 2 && info.type_name.front() == '{' &&
             info.type_name.back() == '}') {
    info.kind = ValueKind::kChoices;
    info.choices = SplitChoices(info.type_name);
  } else if (info.type_name == "DIR") {
    info.kind = ValueKind::kDirectory;
  } else if (info.type_name == "FILE" || info.type_name == "PATH") {
    info.kind = ValueKind::kFile;
  } else if (info.type_name == "COMMAND") {
    info.kind = ValueKind::kCommand;
  } else {
    info.kind = ValueKind::kText;
  }
  return info;
}

std::string CommandPath(const CLI::App& app) {
  const CLI::App* parent = app.get_parent();
  if (parent == nullptr) return app.get_name();
  return CommandPath(*parent) + " " + app.get_name();
}

std::string RoffEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) out.insert(0, "\\&");
  return out;
}

}  // namespace cordon::cli
