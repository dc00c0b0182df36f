// autotune networks: the built-in networks of `tune --network`, and one network's layers as the task
// list `tune --tasks` reads (so a user can see what a network job tunes, or edit the list first).
#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <nlohmann/json.hpp>

#include "cli/cli_error.h"
#include "cli/command.h"
#include "cli/output.h"
#include "search/networks.h"
#include "search/task_file.h"
#include "tir/ops/operator.h"

namespace autotune::cli {
namespace {

struct NetworksOptions {
  std::string network;
  int batch = 1;
  std::string json;  // --json: "-" for stdout, or a file
};

std::vector<search::TuneTaskSpec> TasksOf(const std::string& network, int batch) {
  auto tasks = search::NetworkTasks(network, batch);
  if (!tasks) throw UserError{tasks.error().message};
  return *tasks;
}

// The layers counted with their repeats, and their floating-point operations.
struct Totals {
  double layers = 0;
  double flops = 0;
};

Totals Sum(const std::vector<search::TuneTaskSpec>& tasks) {
  Totals t;
  for (const auto& task : tasks) {
    auto w = tir::MakeWorkload(task.op, task.shape, task.epilogue);
    if (!w) throw UserError{fmt::format("built-in layer {} does not build: {}", task.name, w.error().message)};
    t.layers += task.weight;
    t.flops += task.weight * w->flops;
  }
  return t;
}

bool IsNetworkName(const std::string& name) {
  const auto names = search::NetworkNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

int ListNetworks(const NetworksOptions& o) {
  const int batch = o.batch;
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& name : search::NetworkNames()) {
    const auto tasks = TasksOf(name, batch);
    const Totals t = Sum(tasks);
    if (!o.json.empty()) {
      out.push_back({{"name", name}, {"batch", batch}, {"tasks", tasks.size()}, {"layers", t.layers}, {"flops", t.flops}});
    } else {
      fmt::print("{:<14} {:>3} tasks  {:>3} layers  {:>7.2f} GFLOP at batch {}\n", name, tasks.size(), t.layers,
                 t.flops / 1e9, batch);
    }
  }
  if (!o.json.empty()) WriteOutput(o.json, out.dump(2) + "\n", "the networks");
  else fmt::print("\n`autotune networks NAME --batch N` lists a network's tasks; `autotune tune --network NAME` tunes them.\n");
  return 0;
}

int ShowNetwork(const NetworksOptions& o) {
  const int batch = o.batch;
  const auto tasks = TasksOf(o.network, batch);
  if (!o.json.empty()) {
    WriteOutput(o.json, search::TaskListJson(tasks), "the task list");
    return 0;
  }
  size_t width = 4, op_width = 2, shape_width = 5;
  for (const auto& t : tasks) {
    width = std::max(width, t.name.size());
    op_width = std::max(op_width, t.op.size());
    shape_width = std::max(shape_width, t.shape.size());
  }
  fmt::print("{:<{}}  {:<{}}  {:<{}}  {:<9}  {:>6}\n", "task", width, "op", op_width, "shape", shape_width, "epilogue",
             "weight");
  for (const auto& t : tasks) {
    fmt::print("{:<{}}  {:<{}}  {:<{}}  {:<9}  {:>6}\n", t.name, width, t.op, op_width, t.shape, shape_width,
               t.epilogue.empty() ? "-" : t.epilogue, t.weight);
  }
  const Totals sum = Sum(tasks);
  fmt::print("\n{} tasks, {} layers, {:.2f} GFLOP at batch {}. `--json` writes this list as `tune --tasks` reads it.\n",
             tasks.size(), sum.layers, sum.flops / 1e9, batch);
  return 0;
}

}  // namespace

CommandRun AddNetworksCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("networks", "List the built-in networks of `tune --network`, or one network's layers");
  auto o = std::make_shared<NetworksOptions>();
  cmd->add_option("network", o->network, "a network: its tasks (operator, shape, epilogue, weight: occurrences)");
  cmd->add_option("--batch", o->batch, "batch size")->check(CLI::Range(1, 4096));
  AddJsonOption(*cmd, o->json, "the networks, or a network's task list as `tune --tasks` reads it,");
  cmd->footer(
      "Examples:\n"
      "  autotune networks\n"
      "  autotune networks resnet50 --batch 16\n"
      "  autotune networks bert_base --json > bert.json   # edit, then: autotune tune --tasks bert.json");
  return [o]() {
    // `networks --json NAME` hands NAME to --json; a network's name there means the network.
    if (o->network.empty() && IsNetworkName(o->json)) o->network = std::exchange(o->json, "-");
    return o->network.empty() ? ListNetworks(*o) : ShowNetwork(*o);
  };
}

}  // namespace autotune::cli
