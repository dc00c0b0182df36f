// The registry of built-in schedule rules: explicit registration, one line per rule file.
#include <string>
#include <vector>

#include "search/rules/builtin_rules.h"

namespace autotune::search {
namespace {

const std::vector<std::unique_ptr<ScheduleRule>>& Rules() {
  static const auto* rules = [] {
    auto* r = new std::vector<std::unique_ptr<ScheduleRule>>();
    r->push_back(MakeSplitKRule());
    r->push_back(MakeIm2colRule());
    r->push_back(MakeCacheWriteLocalRule());
    r->push_back(MakeCacheReadSharedRule());
    r->push_back(MakeInlinePaddingRule());
    r->push_back(MakeInlineEpilogueRule());
    r->push_back(MakeMultiLevelTilingGpuRule());
    r->push_back(MakeCooperativeFetchRule());
    r->push_back(MakeAutoUnrollRule());
    r->push_back(MakeCombinePartialsRule());
    r->push_back(MakeMultiLevelTilingCpuRule());
    r->push_back(MakeRegisterTilingCpuRule());
    r->push_back(MakeCopyOperandCpuRule());
    r->push_back(MakeEpilogueAtOuterTileRule());
    r->push_back(MakeRowsGpuRule());
    r->push_back(MakeRowsCpuRule());
    r->push_back(MakeSplitRowsRule());
    r->push_back(MakeTensorCoreTilingRule());
    r->push_back(MakeMatrixFormCpuRule());
    return r;
  }();
  return *rules;
}

}  // namespace

const ScheduleRule* FindScheduleRule(std::string_view name) {
  for (const auto& r : Rules()) {
    if (r->Name() == name) return r.get();
  }
  return nullptr;
}

std::vector<std::string> ScheduleRuleNames() {
  std::vector<std::string> out;
  for (const auto& r : Rules()) out.emplace_back(r->Name());
  return out;
}

}  // namespace autotune::search
