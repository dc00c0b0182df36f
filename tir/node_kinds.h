// The one list of IR node kinds. Visitors, mutators, equality, hashing and the printer are generated
// from (or checked against) these lists: adding a node is one line here plus its struct.
#pragma once

#define AUTOTUNE_EXPR_NODES(X) \
  X(IntImm)                    \
  X(FloatImm)                  \
  X(Var)                       \
  X(Binary)                    \
  X(Not)                       \
  X(Select)                    \
  X(Cast)                      \
  X(BufferLoad)                \
  X(Call)                      \
  X(Reduce)

#define AUTOTUNE_STMT_NODES(X) \
  X(For)                       \
  X(BufferStore)               \
  X(Allocate)                  \
  X(IfThenElse)                \
  X(Seq)                       \
  X(Barrier)                   \
  X(Tensorize)
