// A subcommand of the autotune executable: it registers its options on the app and returns the
// function that runs it (exit status as the result; UserError for user mistakes).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <initializer_list>
#include <string>

namespace autotune::cli {

using CommandRun = std::function<int()>;
using AddCommandFn = CommandRun (*)(CLI::App&);

// A command made of subcommands (`autotune db stats`, `autotune model train`): exactly one is required.
CommandRun AddCommandGroup(CLI::App& app, const std::string& name, const std::string& description, const std::string& footer,
                           std::initializer_list<AddCommandFn> subcommands);

CommandRun AddOpsCommand(CLI::App& app);
CommandRun AddShowCommand(CLI::App& app);
CommandRun AddMeasureCommand(CLI::App& app);
CommandRun AddTargetsCommand(CLI::App& app);
CommandRun AddDbCommand(CLI::App& app);
CommandRun AddLookupCommand(CLI::App& app);
CommandRun AddTuneCommand(CLI::App& app);
CommandRun AddModelCommand(CLI::App& app);
CommandRun AddWorkerCommand(CLI::App& app);
CommandRun AddReportCommand(CLI::App& app);
CommandRun AddNetworksCommand(CLI::App& app);

}  // namespace autotune::cli
