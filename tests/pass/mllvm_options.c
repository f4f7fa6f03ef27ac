// The -mllvm options need the plugin loaded before clang parses them: -fplugin=X loads it early,
// -fpass-plugin=X alone loads it too late and clang rejects the option.
// RUN: %clang -O0 -fplugin=%plugin -fpass-plugin=%plugin -mllvm -ilgen-exclude=fun:skipped -S -emit-llvm -o - %s | FileCheck %s
// RUN: %clang -O2 -fplugin=%plugin -fpass-plugin=%plugin -mllvm -ilgen-include=fun:kept -S -emit-llvm -o - %s | FileCheck %s
// RUN: not %clang -O0 -fpass-plugin=%plugin -mllvm -ilgen-exclude=fun:skipped -S -emit-llvm -o /dev/null %s 2>&1 | FileCheck %s --check-prefix=NOLOAD
// NOLOAD: Unknown command line argument '-ilgen-exclude=fun:skipped'

int g;

// CHECK-LABEL: define {{.*}} @kept(
// CHECK: call void @__ilgen_write(ptr @g,
void kept(void) { g = 1; }

// CHECK-LABEL: define {{.*}} @skipped(
// CHECK-NOT: call void @__ilgen_write
// CHECK: ret void
void skipped(void) { g = 2; }
