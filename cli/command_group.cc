#include <map>
#include <memory>

#include "cli/cli_error.h"
#include "cli/command.h"

namespace autotune::cli {

CommandRun AddCommandGroup(CLI::App& app, const std::string& name, const std::string& description, const std::string& footer,
                           std::initializer_list<AddCommandFn> subcommands) {
  auto* cmd = app.add_subcommand(name, description);
  cmd->require_subcommand(1);
  cmd->footer(footer);
  auto runs = std::make_shared<std::map<CLI::App*, CommandRun>>();
  for (AddCommandFn add : subcommands) {
    const size_t before = cmd->get_subcommands({}).size();
    CommandRun run = add(*cmd);
    (*runs)[cmd->get_subcommands({})[before]] = std::move(run);
  }
  return [cmd, runs]() {
    for (auto* sub : cmd->get_subcommands()) return runs->at(sub)();
    return kExitUsage;
  };
}

}  // namespace autotune::cli
