#include "tir/transform/replace_buffers.h"

#include "tir/functor.h"

namespace autotune::tir {
namespace {

class BufferReplacer : public IRMutator {
 public:
  explicit BufferReplacer(const std::unordered_map<const BufferNode*, Buffer>& map) : map_(map) {}
  Buffer MutateBuffer(const Buffer& b) override {
    auto it = map_.find(b.get());
    return it == map_.end() ? b : it->second;
  }

 private:
  const std::unordered_map<const BufferNode*, Buffer>& map_;
};

}  // namespace

Stmt ReplaceBuffers(const Stmt& s, const std::unordered_map<const BufferNode*, Buffer>& map) {
  if (map.empty()) return s;
  return BufferReplacer(map).Mutate(s);
}

}  // namespace autotune::tir
