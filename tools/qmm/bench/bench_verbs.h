// The subjects of `qmm bench`; argv[0] is the subject.
#pragma once

namespace qmm::cli {

int bench_matmul(int argc, char** argv);
int bench_limits(int argc, char** argv);
int bench_model(int argc, char** argv);
int bench_serve(int argc, char** argv);
int bench_kl(int argc, char** argv);
int bench_tokenizer(int argc, char** argv);

}  // namespace qmm::cli
