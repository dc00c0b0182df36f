// The built-in schedule rules, one per file in this directory (search/sketch.h says which sketch
// uses which, in what order).
#pragma once

#include <memory>

#include "search/rules/schedule_rule.h"

namespace autotune::search {

std::unique_ptr<ScheduleRule> MakeSplitKRule();
std::unique_ptr<ScheduleRule> MakeIm2colRule();
std::unique_ptr<ScheduleRule> MakeCacheWriteLocalRule();
std::unique_ptr<ScheduleRule> MakeCacheReadSharedRule();
std::unique_ptr<ScheduleRule> MakeInlinePaddingRule();
std::unique_ptr<ScheduleRule> MakeInlineEpilogueRule();
std::unique_ptr<ScheduleRule> MakeMultiLevelTilingGpuRule();
std::unique_ptr<ScheduleRule> MakeCooperativeFetchRule();
std::unique_ptr<ScheduleRule> MakeAutoUnrollRule();
std::unique_ptr<ScheduleRule> MakeCombinePartialsRule();
std::unique_ptr<ScheduleRule> MakeMultiLevelTilingCpuRule();
std::unique_ptr<ScheduleRule> MakeRegisterTilingCpuRule();
std::unique_ptr<ScheduleRule> MakeCopyOperandCpuRule();
std::unique_ptr<ScheduleRule> MakeEpilogueAtOuterTileRule();
std::unique_ptr<ScheduleRule> MakeRowsGpuRule();
std::unique_ptr<ScheduleRule> MakeRowsCpuRule();
std::unique_ptr<ScheduleRule> MakeSplitRowsRule();
std::unique_ptr<ScheduleRule> MakeTensorCoreTilingRule();
std::unique_ptr<ScheduleRule> MakeMatrixFormCpuRule();

}  // namespace autotune::search
