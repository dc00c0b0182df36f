// autotune ops: the operators and their shape parameters.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/output.h"
#include "tir/ops/operator.h"

namespace autotune::cli {

CommandRun AddOpsCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("ops", "List the operators and their shape parameters");
  auto json = std::make_shared<std::string>();
  AddJsonOption(*cmd, *json, "the list");
  cmd->footer("Examples:\n  autotune ops\n  autotune ops --json | jq '.[].name'");
  return [json]() {
    nlohmann::json out = nlohmann::json::array();
    for (const auto* op : tir::BuiltinOperators().All()) {
      if (!json->empty()) {
        nlohmann::json params = nlohmann::json::array();
        for (const auto& p : op->Params()) {
          params.push_back({{"name", p.name}, {"default", p.default_value ? nlohmann::json(*p.default_value) : nullptr},
                            {"help", p.help}});
        }
        out.push_back({{"name", op->Name()}, {"summary", op->Summary()}, {"params", params}});
        continue;
      }
      fmt::print("{}  {}\n", op->Name(), op->Summary());
      for (const auto& p : op->Params()) {
        fmt::print("    {:<10} {}{}\n", p.name, p.help,
                   p.default_value ? fmt::format(" (default {})", *p.default_value) : std::string(" (required)"));
      }
    }
    if (!json->empty()) WriteOutput(*json, out.dump(2) + "\n", "the operators");
    else fmt::print("\nEpilogues (--epilogue): none, or parts applied in the order given: {}\n", tir::EpiloguePartNames());
    return 0;
  };
}

}  // namespace autotune::cli
