// Built-in networks for `autotune tune --network NAME --batch N`: the distinct tensor-operator layers
// of the network (conv2d, gemm, batch_matmul with their fused epilogues), each with the number of
// times it occurs as its weight.
#pragma once

#include <string>
#include <vector>

#include "search/tune_task.h"
#include "support/result.h"

namespace autotune::search {

// "resnet18", "resnet50", "mobilenet_v2", "bert_base".
std::vector<std::string> NetworkNames();
// Unknown names and batch < 1 are errors that list what is accepted.
Result<std::vector<TuneTaskSpec>> NetworkTasks(const std::string& network, int batch);

}  // namespace autotune::search
