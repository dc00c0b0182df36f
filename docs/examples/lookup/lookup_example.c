/* Asks an autotune tuning database for the best kernel of one workload and prints how to launch it.
 * Usage: lookup_example DB OP SHAPE TARGET [EPILOGUE] [--nearest] [--source] */
#include <autotune/lookup.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s DB OP SHAPE TARGET [EPILOGUE] [--nearest] [--source]\n", argv[0]);
    return 2;
  }
  const char* epilogue = "";
  unsigned flags = AUTOTUNE_LOOKUP_EXACT;
  int print_source = 0;
  for (int i = 5; i < argc; ++i) {
    if (strcmp(argv[i], "--nearest") == 0) flags |= AUTOTUNE_LOOKUP_NEAREST;
    else if (strcmp(argv[i], "--source") == 0) print_source = 1;
    else epilogue = argv[i];
  }

  autotune_db* db = NULL;
  if (autotune_db_open(argv[1], &db) != AUTOTUNE_OK) {
    fprintf(stderr, "lookup_example: %s\n", autotune_last_error());
    return 1;
  }
  const autotune_kernel* k = NULL;
  autotune_status status = autotune_lookup(db, argv[2], argv[3], epilogue, argv[4], flags, &k);
  if (status != AUTOTUNE_OK) {
    fprintf(stderr, "lookup_example: %s\n", autotune_last_error());
    autotune_db_close(db);
    return status == AUTOTUNE_NOT_FOUND ? 3 : 1;
  }
  printf("%s answer from %s on %s\n", autotune_kernel_is_exact(k) ? "exact" : "approximate",
         autotune_kernel_measured_workload(k), autotune_kernel_target(k));
  printf("measured %.4f ms (%.1f GFLOP/s); estimated here %.4f ms\n", autotune_kernel_latency_ms(k),
         autotune_kernel_gflops(k), autotune_kernel_estimated_latency_ms(k));
  printf("%s source, %zu bytes; %d pointer params, %d workspaces\n", autotune_kernel_language(k),
         strlen(autotune_kernel_source(k)), autotune_kernel_num_params(k), autotune_kernel_num_workspaces(k));
  for (int i = 0; i < autotune_kernel_num_launches(k); ++i) {
    int64_t grid[3], block[3];
    autotune_kernel_grid(k, i, grid);
    autotune_kernel_block(k, i, block);
    printf("launch %d: %s grid (%lld,%lld,%lld) block (%lld,%lld,%lld) dynamic shared %lld bytes\n", i,
           autotune_kernel_entry(k, i), (long long)grid[0], (long long)grid[1], (long long)grid[2],
           (long long)block[0], (long long)block[1], (long long)block[2],
           (long long)autotune_kernel_dynamic_shared_bytes(k, i));
  }
  if (print_source) fputs(autotune_kernel_source(k), stdout);
  autotune_db_close(db);
  return 0;
}
