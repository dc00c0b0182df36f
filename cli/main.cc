// autotune: the command-line entry point.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstring>
#include <map>
#include <vector>

#include "cli/cli_error.h"
#include "cli/command.h"
#include "cli/help_format.h"
#include "tir/version.h"

int main(int argc, char** argv) {
  using namespace autotune::cli;
  CLI::App app{"autotune: auto-scheduling search for fast tensor kernels", "autotune"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("autotune ") + autotune::kVersion);
  // Set before the commands are added: they inherit both.
  app.formatter(std::make_shared<HelpFormatter>());
  app.option_defaults()->always_capture_default();
  std::map<CLI::App*, CommandRun> commands;
  auto add = [&](CommandRun (*fn)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    CommandRun run = fn(app);
    commands[app.get_subcommands({})[before]] = std::move(run);
  };
  add(AddOpsCommand);
  add(AddShowCommand);
  add(AddMeasureCommand);
  add(AddTargetsCommand);
  add(AddDbCommand);
  add(AddLookupCommand);
  add(AddTuneCommand);
  add(AddNetworksCommand);
  add(AddModelCommand);
  add(AddWorkerCommand);
  add(AddReportCommand);
  // `autotune --op conv2d --shape ...` (options, no command) means `autotune tune ...`.
  std::vector<char*> args(argv, argv + argc + 1);  // with argv's terminating null
  if (argc > 1 && std::strncmp(argv[1], "--", 2) == 0 && std::strcmp(argv[1], "--help") != 0 &&
      std::strcmp(argv[1], "--version") != 0) {
    static char tune[] = "tune";
    args.insert(args.begin() + 1, tune);
    argc = static_cast<int>(args.size()) - 1;
    argv = args.data();
  }
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (auto* sub : app.get_subcommands({})) {
      known |= sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "autotune: unknown command '%s' (commands: %s)\n", argv[1], names.c_str());
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line naming the problem; --help tells the rest.
    std::fprintf(stderr, "autotune: %s (see autotune --help)\n", e.what());
    return kExitUsage;
  }
  try {
    for (auto* sub : app.get_subcommands()) return commands.at(sub)();
  } catch (const UserError& e) {
    std::fprintf(stderr, "autotune: %s\n", e.message.c_str());
    return kExitUsage;
  }
  return kExitUsage;
}
