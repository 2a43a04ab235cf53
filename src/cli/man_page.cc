// cordon(1): one page with a section per subcommand, generated from the CLI11 tree. The
// sections that --help has no room for (EXIT STATUS, ENVIRONMENT, FILES, SEE ALSO) are written
// here; the exit codes come from the same table as --help's footer (kExitCodes).
#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cli/command_line.h"
#include "cli/manual.h"

namespace cordon::cli {
namespace {

// "\fB\-\-mode\fR, \fB\-m\fR \fI{off,read_only,workspace_write}\fR"
std::string OptionHeading(const OptionInfo& o) {
  std::string out;
  if (!o.positional.empty()) {
    out = fmt::format("\\fI{}\\fR", RoffEscape(o.type_name.empty() ? o.positional : o.type_name));
  } else {
    for (const std::string& name : o.names) {
      if (!out.empty()) out += ", ";
      out += fmt::format("\\fB{}\\fR", RoffEscape(name));
    }
    if (o.takes_value) out += fmt::format(" \\fI{}\\fR", RoffEscape(o.type_name));
  }
  if (o.repeatable) out += " ...";
  return out;
}

std::string OptionBody(const OptionInfo& o) {
  std::string body = RoffEscape(o.description);
  if (!o.default_value.empty()) body += fmt::format(" (default: {})", RoffEscape(o.default_value));
  if (o.required) body += " (required)";
  return body;
}

// "[\fB\-\-json\fR] [\fB\-\-mode\fR \fI...\fR] \fICOMMAND\fR..."
std::string Synopsis(const CLI::App& app) {
  std::string out = fmt::format(".B {}\n", RoffEscape(CommandPath(app)));
  std::string positionals;
  for (const CLI::Option* option : VisibleOptions(app)) {
    OptionInfo o = DescribeOption(*option);
    if (o.names == std::vector<std::string>{"--help", "-h"}) continue;
    if (!o.positional.empty()) {
      std::string name = RoffEscape(o.type_name == "COMMAND" ? "[--] COMMAND" : o.type_name);
      const std::string word = fmt::format("\\fI{}\\fR{}", name, o.repeatable ? "..." : "");
      positionals += o.required ? " " + word : " [" + word + "]";
      continue;
    }
    out += fmt::format("[\\fB{}\\fR{}]\n", RoffEscape(o.names.front()),
                       o.takes_value ? fmt::format(" \\fI{}\\fR", RoffEscape(o.type_name)) : "");
  }
  std::vector<const CLI::App*> subs = VisibleSubcommands(app);
  if (!subs.empty()) {
    std::string names;
    for (const CLI::App* sub : subs) names += (names.empty() ? "" : "|") + sub->get_name();
    out += fmt::format("{}\\fI{}\\fR\n", app.get_require_subcommand_min() > 0 ? "" : "[",
                       RoffEscape(names));
    if (app.get_require_subcommand_min() == 0) out += "]\n";
  }
  if (!positionals.empty()) out += positionals.substr(1) + "\n";
  return out;
}

void AppSection(const CLI::App& app, std::string& out) {
  out += fmt::format(".SS \"{}\"\n", RoffEscape(CommandPath(app)));
  out += ".nh\n.ad l\n" + Synopsis(app) + ".ad\n.hy\n.PP\n";
  out += RoffEscape(app.get_description()) + "\n";
  for (const CLI::Option* option : VisibleOptions(app)) {
    OptionInfo o = DescribeOption(*option);
    out += fmt::format(".TP\n{}\n{}\n", OptionHeading(o), OptionBody(o));
  }
  for (const CLI::App* sub : VisibleSubcommands(app)) AppSection(*sub, out);
}

constexpr const char* kDescriptionTail =
    "Every command passes two fences. The command policy parses the text as POSIX shell and "
    "refuses it when a deny rule matches (a denial is an answer, exit 126, and nothing runs). "
    "The OS sandbox (Linux namespaces, a read-only view of the host, Landlock, seccomp) then "
    "confines the command and every process it starts: writes only in the workspace and a "
    "private temporary directory, network only when allowed, credential stores hidden, a "
    "minimal environment, and a process tree that dies as a whole. A guarantee this machine "
    "cannot enforce is refused (exit 125), never silently dropped; \\fBcordon doctor\\fR says "
    "what is missing and how to fix it.";

constexpr const char* kEnvironment =
    ".TP\n.B XDG_CONFIG_HOME\nThe user config is $XDG_CONFIG_HOME/cordon/config.json "
    "(default: ~/.config/cordon/config.json).\n"
    ".TP\n.B HOME\nLocates ~/.config and the credential stores under the real home that the "
    "sandbox hides.\n"
    ".TP\n.B PATH\n\\fBdoctor\\fR looks for \\fBbwrap\\fR(1) on it.\n"
    ".PP\nCommands run with a minimal environment: a fixed allow-list plus the names in the "
    "config's environment.pass and environment.set; every other variable of the caller "
    "(tokens, database URLs) is dropped. HOME and TMPDIR point into the sandbox's private "
    "directories.\n";

constexpr const char* kFiles =
    ".TP\n.I $XDG_CONFIG_HOME/cordon/config.json\nThe user config (JSON, mode 0600 when cordon "
    "writes it). Settings that widen the sandbox are read only from here and the command line, "
    "never from the workspace. \\fBcordon sandbox\\fR edits it atomically.\n";

constexpr const char* kSeeAlso =
    ".BR bwrap (1),\n.BR namespaces (7),\n.BR user_namespaces (7),\n.BR landlock (7),\n"
    ".BR seccomp (2),\n.BR capabilities (7).\n"
    ".PP\nThe project documentation: docs/cli.md, docs/config.md, docs/mcp.md, "
    "docs/threat\\-model.md, docs/exit\\-codes.md.\n";

}  // namespace

std::string ManPage(const CLI::App& root, std::string_view version) {
  std::string description = root.get_description();
  if (description.starts_with("cordon: ")) description.erase(0, 8);
  std::string out = fmt::format(
      ".\\\" Generated by `cordon __generate man` from the command-line definitions; do not edit.\n"
      ".TH CORDON 1 \"\" \"cordon {}\" \"User Commands\"\n"
      ".SH NAME\ncordon \\- {}\n",
      RoffEscape(version), RoffEscape(description));
  out +=
      ".SH SYNOPSIS\n.B cordon\n[\\fIglobal options\\fR] \\fIcommand\\fR "
      "[\\fIoptions\\fR] [\\fIarguments\\fR]\n";
  out += fmt::format(".SH DESCRIPTION\ncordon {}\n.PP\n{}\n", RoffEscape(description),
                     kDescriptionTail);
  out += ".SH GLOBAL OPTIONS\n";
  for (const CLI::Option* option : VisibleOptions(root)) {
    OptionInfo o = DescribeOption(*option);
    out += fmt::format(".TP\n{}\n{}\n", OptionHeading(o), OptionBody(o));
  }
  out += ".SH COMMANDS\n";
  for (const CLI::App* sub : VisibleSubcommands(root)) AppSection(*sub, out);
  out += ".SH EXIT STATUS\n";
  for (const ExitCodeDoc& row : kExitCodes) {
    out += fmt::format(".TP\n.B {}\n{}\n", RoffEscape(row.code), RoffEscape(row.meaning));
  }
  out += fmt::format(".SH ENVIRONMENT\n{}.SH FILES\n{}.SH SEE ALSO\n{}", kEnvironment, kFiles,
                     kSeeAlso);
  return out;
}

}  // namespace cordon::cli
