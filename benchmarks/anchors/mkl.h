/* Stand-in for Intel MKL's header, written for rowbook's benchmarks (not part of pWord2Vec).
 *
 * pWord2Vec.cpp built with -D USE_MKL includes "mkl.h" and calls two functions of it:
 * cblas_sgemm and mkl_set_num_threads. Here they are OpenBLAS's: the system's
 * (libopenblas-dev, symbols cblas_sgemm / openblas_set_num_threads) or the copy that
 * SciPy's wheel bundles, whose symbols carry a prefix: build with
 * -D ROWBOOK_BLAS_PREFIX=scipy_ for that one (benchmarks/bench_anchors.py decides).
 */
#pragma once

#ifndef ROWBOOK_BLAS_PREFIX
#define ROWBOOK_BLAS_PREFIX
#endif
#define ROWBOOK_CAT2(a, b) a##b
#define ROWBOOK_CAT(a, b) ROWBOOK_CAT2(a, b)

enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112 };

extern "C" void ROWBOOK_CAT(ROWBOOK_BLAS_PREFIX, cblas_sgemm)(
    CBLAS_ORDER order, CBLAS_TRANSPOSE a_trans, CBLAS_TRANSPOSE b_trans, int m, int n, int k,
    float alpha, const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
extern "C" void ROWBOOK_CAT(ROWBOOK_BLAS_PREFIX, openblas_set_num_threads)(int threads);

#define cblas_sgemm ROWBOOK_CAT(ROWBOOK_BLAS_PREFIX, cblas_sgemm)
#define mkl_set_num_threads ROWBOOK_CAT(ROWBOOK_BLAS_PREFIX, openblas_set_num_threads)
