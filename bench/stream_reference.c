/* A plain OpenMP STREAM triad (a[i] = b[i] + s * c[i]), the yardstick for hwplan's cpu_stream.
 *
 * Deliberately the obvious code a STREAM user would compile: static schedule, first touch by the same
 * threads, best of N passes after one warm-up, 24 bytes counted per element (two loads, one store; the
 * write-allocate read is not counted, as in STREAM). Written for hwplan, not copied from STREAM.
 *
 *   gcc -O3 -fopenmp bench/stream_reference.c -o stream_reference
 *   ./stream_reference [elements_per_array (default 2^25)] [passes (default 20)]
 *
 * Prints one human line on stderr and one machine line on stdout: "triad_best_bytes_per_s <value>".
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : (1L << 25);
  const int passes = argc > 2 ? atoi(argv[2]) : 20;
  if (n <= 0 || passes < 2) {
    fprintf(stderr, "usage: %s [elements_per_array > 0] [passes >= 2]\n", argv[0]);
    return 2;
  }
  double* a = malloc((size_t)n * sizeof(double));
  double* b = malloc((size_t)n * sizeof(double));
  double* c = malloc((size_t)n * sizeof(double));
  if (!a || !b || !c) {
    fprintf(stderr, "cannot allocate 3 x %ld doubles\n", n);
    return 1;
  }
  const double s = 3.0;
  int threads = 1;
#pragma omp parallel
  {
#pragma omp single
    threads = omp_get_num_threads();
#pragma omp for schedule(static)
    for (long i = 0; i < n; ++i) {
      a[i] = 1.0;
      b[i] = 2.0;
      c[i] = 0.5;
    }
  }

  double best = INFINITY;
  for (int p = 0; p < passes; ++p) {
    const double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    const double t = omp_get_wtime() - t0;
    if (p > 0 && t < best) best = t; /* pass 0 is the warm-up */
  }
  /* Every pass writes a = 2 + 3 * 0.5 = 3.5: check it, so the loop cannot be optimised away unnoticed. */
  if (a[0] != 3.5 || a[n / 2] != 3.5 || a[n - 1] != 3.5) {
    fprintf(stderr, "triad result is wrong\n");
    return 1;
  }
  const double bytes = 24.0 * (double)n;
  fprintf(stderr, "triad: %.1f GB/s best of %d passes, 3 x %.1f MiB, %d threads\n", bytes / best / 1e9, passes - 1,
          (double)n * sizeof(double) / (1024.0 * 1024.0), threads);
  printf("triad_best_bytes_per_s %.6e\n", bytes / best);
  free(a);
  free(b);
  free(c);
  return 0;
}
