// Registration glue: the part of the plugin that must be C++ because the pass-plugin interface
// is C++ (PassBuilder callbacks, PassInfoMixin, cl::opt). It takes clang's/opt's PassBuilder and
// gives back one module pass, `ilgen`, whose run() hands the module to the Rust side
// (`ilgen_run_on_module`) after LLVM's inference of the C library's attributes. Also exposes the
// IR utilities the LLVM C API lacks (critical-edge splitting, llvm.compiler.used, a constructor,
// ScalarEvolution's loop ranges, the functions of an inlined-at chain, the guarded shadow-stack
// hooks), as extern "C" functions the Rust side calls.

#include "llvm-c/Types.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/GlobalValue.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/CBindingWrapping.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Transforms/IPO/InferFunctionAttrs.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

#include <string>

using namespace llvm;

// Defined in Rust (lib.rs). Each returns nonzero when it changed the module.
extern "C" int ilgen_run_on_module(LLVMModuleRef module, const char *exclude, const char *include);
extern "C" int ilgen_mark_wait_loops(LLVMModuleRef module);

// `-mllvm -ilgen-exclude=fun:GLOB,src:GLOB` / `-mllvm -ilgen-include=...`: which functions get
// memory instrumentation; merged on the Rust side with ILGEN_PASS_OPTIONS.
static cl::opt<std::string> ExcludeOpt("ilgen-exclude",
                                       cl::desc("ilgen: fun:GLOB,src:GLOB patterns of functions and "
                                                "files whose memory accesses are not instrumented"),
                                       cl::init(""));
static cl::opt<std::string> IncludeOpt("ilgen-include",
                                       cl::desc("ilgen: fun:GLOB,src:GLOB patterns; when given, only "
                                                "matching functions get memory instrumentation"),
                                       cl::init(""));

namespace {
// The C library's attributes LLVM knows (`inferattrs`: the math functions read no memory and
// write only `errno`), which the optimizer would give the declarations early in its pipeline
// anyway; both passes read them to tell calls that cannot synchronize (`redundant.rs`), and the
// wait-loop pass runs before the optimizer's own inference. The analysis manager's library info
// is clang's, so `-fno-builtin` turns it off as for the optimizer.
static bool inferLibraryAttributes(Module &M, ModuleAnalysisManager &MAM) {
  return !InferFunctionAttrsPass().run(M, MAM).areAllPreserved();
}

struct IlgenPass : PassInfoMixin<IlgenPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM) {
    bool inferred = inferLibraryAttributes(M, MAM);
    int changed = ilgen_run_on_module(wrap(&M), ExcludeOpt.c_str(), IncludeOpt.c_str());
    return changed || inferred ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  // Instrumentation must run even for optnone functions (every function at -O0).
  static bool isRequired() { return true; }
};

// Wait-loop markers, before loop rotation moves a loop's first predicate test out of the loop.
struct IlgenWaitLoopsPass : PassInfoMixin<IlgenWaitLoopsPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM) {
    bool inferred = inferLibraryAttributes(M, MAM);
    return ilgen_mark_wait_loops(wrap(&M)) || inferred ? PreservedAnalyses::none()
                                                       : PreservedAnalyses::all();
  }
  static bool isRequired() { return true; }
};
} // namespace

extern "C" PassPluginLibraryInfo ilgen_plugin_info() {
  return {LLVM_PLUGIN_API_VERSION, "ilgen", "0.1", [](PassBuilder &PB) {
            // Last in the optimizer pipeline, like TSan: runs at -O0 too, and sees the IR after
            // inlining and promotion to registers, so fewer accesses remain to instrument.
            // First in the pipeline: markers go on the loops as the source wrote them.
            PB.registerPipelineStartEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(IlgenWaitLoopsPass()); });
            PB.registerOptimizerLastEPCallback(
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(IlgenPass()); });
            // `opt -passes=ilgen` (both steps) and `opt -passes=ilgen-wait-loops`, for the lit tests.
            PB.registerPipelineParsingCallback(
                [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
                  if (Name == "ilgen-wait-loops") {
                    MPM.addPass(IlgenWaitLoopsPass());
                    return true;
                  }
                  if (Name != "ilgen")
                    return false;
                  MPM.addPass(IlgenPass());
                  return true;
                });
          }};
}

// Splits the edge from `term`'s block to its successor `index` and returns the new block, or null
// when LLVM cannot split it (edges into EH pads, from indirectbr/callbr). The C API cannot do this:
// it has no way to retarget the PHI incoming blocks of the successor.
extern "C" LLVMBasicBlockRef ilgen_split_critical_edge(LLVMValueRef term, unsigned index) {
  auto *TI = dyn_cast_or_null<Instruction>(unwrap(term));
  if (!TI || !TI->isTerminator() || index >= TI->getNumSuccessors())
    return nullptr;
  BasicBlock *Succ = TI->getSuccessor(index);
  if (Succ->isEHPad())
    return nullptr;
  // MergeIdenticalEdges: a switch with several cases to one block has one edge per case; all of
  // them go through the new block, so one marker covers the whole (from, to) transfer.
  CriticalEdgeSplittingOptions Options;
  Options.setMergeIdenticalEdges();
  BasicBlock *New = SplitKnownCriticalEdge(TI, index, Options);
  return wrap(New);
}

// Keeps `global` alive through optimization and linking of this module (the site table is
// referenced only through the `ilgen_sites` section).
extern "C" void ilgen_append_to_compiler_used(LLVMModuleRef module, LLVMValueRef global) {
  auto *GV = dyn_cast_or_null<GlobalValue>(unwrap(global));
  if (GV)
    appendToCompilerUsed(*unwrap(module), {GV});
}

// Adds a constructor that calls `hook(__start_<section>, __stop_<section>)`: the bounds of the
// section in the executable or shared object this module is linked into. The references are
// hidden, so a shared object's resolve to its own section, never to the executable's.
extern "C" void ilgen_add_section_ctor(LLVMModuleRef module, const char *hook,
                                       const char *section) {
  Module &M = *unwrap(module);
  LLVMContext &C = M.getContext();
  if (M.getFunction("ilgen.sites.ctor"))
    return;
  auto bound = [&](const char *prefix) {
    Constant *G = M.getOrInsertGlobal(std::string(prefix) + section, Type::getInt8Ty(C));
    if (auto *GV = dyn_cast<GlobalVariable>(G); GV && GV->isDeclaration()) {
      GV->setLinkage(GlobalValue::ExternalWeakLinkage);
      GV->setVisibility(GlobalValue::HiddenVisibility);
    }
    return G;
  };
  Type *Ptr = PointerType::getUnqual(C);
  FunctionCallee Hook = M.getOrInsertFunction(hook, Type::getVoidTy(C), Ptr, Ptr);
  Function *Ctor = Function::Create(FunctionType::get(Type::getVoidTy(C), false),
                                    GlobalValue::InternalLinkage, "ilgen.sites.ctor", M);
  IRBuilder<> B(BasicBlock::Create(C, "", Ctor));
  B.CreateCall(Hook, {bound("__start_"), bound("__stop_")});
  B.CreateRetVoid();
  appendToGlobalCtors(M, Ctor, 0);
}

// One load or store the Rust side would hook: its pointer and store size in bytes.
struct IlgenLoopAccess {
  LLVMValueRef inst;
  LLVMValueRef ptr;
  uint64_t size;
};

// The bytes one access touches over all iterations of its loop, `len` bytes from `start`, both
// computed before `at` (the preheader's terminator).
struct IlgenLoopRange {
  LLVMValueRef inst;
  LLVMValueRef start;
  LLVMValueRef len;
  LLVMValueRef at;
};

// For the accesses `acc[0..n)` of function `fn`, finds those whose bytes over a whole loop
// ScalarEvolution can name before the loop, writes them to `out` (room for n) and returns how many.
// An access qualifies when its loop is innermost, has a preheader and one exiting block, the latch,
// with a computable backedge-taken count (so the loop runs exactly count + 1 iterations once
// entered), no instruction of the loop may synchronize (`may_sync`, the Rust side's rule) or fail
// to hand on to the next, its
// block dominates the latch (it runs in every iteration), and its address is {start,+,size}<loop>:
// a forward sweep of adjacent elements. The range is then [start, start + (count + 1) * size).
// ScalarEvolution is built here because the C API has none; the expander's instructions go into
// the preheader.
extern "C" size_t ilgen_loop_ranges(LLVMValueRef fn, const IlgenLoopAccess *acc, size_t n,
                                    int (*may_sync)(LLVMValueRef), IlgenLoopRange *out) {
  auto *F = dyn_cast_or_null<Function>(unwrap(fn));
  if (!F || F->isDeclaration() || n == 0)
    return 0;
  DominatorTree DT(*F);
  LoopInfo LI(DT);
  if (LI.empty())
    return 0;
  TargetLibraryInfoImpl TLII(Triple(F->getParent()->getTargetTriple()));
  TargetLibraryInfo TLI(TLII, F);
  AssumptionCache AC(*F);
  ScalarEvolution SE(*F, TLI, AC, DT, LI);
  const DataLayout &DL = F->getParent()->getDataLayout();
  SCEVExpander Expander(SE, DL, "ilgen.range");
  Type *I64 = Type::getInt64Ty(F->getContext());
  DenseMap<Loop *, bool> Fits;
  auto fits = [&](Loop *L) {
    auto It = Fits.find(L);
    if (It != Fits.end())
      return It->second;
    bool Ok = L->isInnermost() && L->getLoopPreheader() && L->getLoopLatch() &&
              L->getExitingBlock() == L->getLoopLatch() &&
              !isa<SCEVCouldNotCompute>(SE.getBackedgeTakenCount(L));
    // Every instruction must also hand on to the next (no call that may throw or not return):
    // the range is recorded before the loop, so the loop must then run all its iterations.
    for (BasicBlock *B : L->blocks())
      for (Instruction &I : *B)
        Ok = Ok && !may_sync(wrap(&I)) && isGuaranteedToTransferExecutionToSuccessor(&I);
    Fits[L] = Ok;
    return Ok;
  };
  size_t Found = 0;
  for (size_t K = 0; K < n; K++) {
    auto *I = dyn_cast_or_null<Instruction>(unwrap(acc[K].inst));
    Value *Ptr = unwrap(acc[K].ptr);
    if (!I || !Ptr || I->getFunction() != F)
      continue;
    Loop *L = LI.getLoopFor(I->getParent());
    if (!L || !fits(L) || !DT.dominates(I->getParent(), L->getLoopLatch()))
      continue;
    auto *Rec = dyn_cast<SCEVAddRecExpr>(SE.getSCEV(Ptr));
    if (!Rec || Rec->getLoop() != L || !Rec->isAffine())
      continue;
    auto *Step = dyn_cast<SCEVConstant>(Rec->getStepRecurrence(SE));
    if (!Step || Step->getAPInt() != acc[K].size)
      continue;
    const SCEV *Trips =
        SE.getAddExpr(SE.getTruncateOrZeroExtend(SE.getBackedgeTakenCount(L), I64), SE.getOne(I64));
    const SCEV *Len = SE.getMulExpr(Trips, SE.getConstant(I64, acc[K].size));
    const SCEV *Start = Rec->getStart();
    if (!Expander.isSafeToExpand(Start) || !Expander.isSafeToExpand(Len))
      continue;
    Instruction *At = L->getLoopPreheader()->getTerminator();
    out[Found++] = {wrap(I), wrap(Expander.expandCodeFor(Start, Ptr->getType(), At)),
                    wrap(Expander.expandCodeFor(Len, I64, At)), wrap(At)};
  }
  return Found;
}

// One frame of an instruction's inlined-at chain: strings owned by the module's metadata.
struct IlgenFrame {
  const char *file;
  size_t file_len;
  const char *dir;
  size_t dir_len;
  const char *function;
  size_t function_len;
  unsigned line;
  unsigned column;
};

// Writes the inlined-at chain of `inst`'s debug location to `out`, innermost frame first, at most
// `cap` of them, and returns the chain's length (0 without a location). A frame's function is its
// subprogram's linkage name, or its name when it has none (C); empty without a subprogram. The
// C API reads a location's scope and file but not the subprogram's names.
extern "C" size_t ilgen_debug_frames(LLVMValueRef inst, IlgenFrame *out, size_t cap) {
  auto *I = dyn_cast_or_null<Instruction>(unwrap(inst));
  if (!I)
    return 0;
  size_t N = 0;
  for (const DILocation *L = I->getDebugLoc().get(); L; L = L->getInlinedAt(), N++) {
    if (N >= cap)
      continue;
    StringRef Name;
    if (DISubprogram *SP = L->getScope()->getSubprogram())
      Name = SP->getLinkageName().empty() ? SP->getName() : SP->getLinkageName();
    StringRef File = L->getFilename(), Dir = L->getDirectory();
    out[N] = {File.data(), File.size(), Dir.data(), Dir.size(), Name.data(), Name.size(),
              L->getLine(), L->getColumn()};
  }
  return N;
}

// The shadow-stack hooks of one function (see stacks.rs), each behind `if (on)`, where `on` is the
// flag `flag` (an i8) as the function loaded it once on entry, so that its entry and exits agree
// even if the flag changes meanwhile: `depth = enter()` on entry, `call(site)` before each of
// `calls` (with `sites[i]`), `leave()` before each return, and `unwound(depth)` after each landing
// pad (an exception skipped the returns of the frames it unwound). The branches are marked
// unlikely: with the flag off the function pays one load and one predicted branch per hook.
// Returns 0 (nothing changed) for a function with funclet EH pads or a musttail call, which
// cannot take code between the call and the return.
extern "C" int ilgen_stack_hooks(LLVMValueRef fn, LLVMValueRef flag, LLVMTypeRef enterTy,
                                 LLVMValueRef enter, LLVMTypeRef callTy, LLVMValueRef call,
                                 LLVMTypeRef leaveTy, LLVMValueRef leave, LLVMTypeRef unwoundTy,
                                 LLVMValueRef unwound, LLVMValueRef *calls, LLVMValueRef *sites,
                                 unsigned n) {
  auto *F = dyn_cast_or_null<Function>(unwrap(fn));
  if (!F || F->isDeclaration())
    return 0;
  SmallVector<ReturnInst *, 4> Rets;
  SmallVector<LandingPadInst *, 4> Pads;
  for (BasicBlock &BB : *F) {
    if (BB.isEHPad() && !BB.isLandingPad())
      return 0;
    if (auto *R = dyn_cast<ReturnInst>(BB.getTerminator()))
      Rets.push_back(R);
    if (auto *L = BB.getLandingPadInst())
      Pads.push_back(L);
    for (Instruction &I : BB)
      if (auto *C = dyn_cast<CallInst>(&I); C && C->isMustTailCall())
        return 0;
  }
  LLVMContext &Ctx = F->getContext();
  MDNode *Unlikely = MDBuilder(Ctx).createBranchWeights(1, 1 << 20);
  DISubprogram *SP = F->getSubprogram();
  BasicBlock &Entry = F->getEntryBlock();
  BasicBlock::iterator IP = Entry.getFirstInsertionPt();
  while (isa<AllocaInst>(&*IP))
    ++IP;
  IRBuilder<> B(&*IP);
  AllocaInst *Depth = nullptr;
  if (!Pads.empty())
    Depth = new AllocaInst(B.getInt32Ty(), F->getParent()->getDataLayout().getAllocaAddrSpace(),
                           "ilgen.depth", &*Entry.getFirstInsertionPt());
  Value *On = B.CreateICmpNE(B.CreateLoad(B.getInt8Ty(), unwrap(flag), "ilgen.stacks"),
                             B.getInt8(0), "ilgen.on");
  // Where a hook call before `Before` goes: a block only `on` enters; and its debug location.
  auto Guarded = [&](Instruction *Before) {
    return SplitBlockAndInsertIfThen(On, Before->getIterator(), false, Unlikely);
  };
  auto LocOf = [&](Instruction *I) {
    DebugLoc DL = I ? I->getDebugLoc() : DebugLoc();
    if (!DL && SP)
      DL = DILocation::get(Ctx, SP->getScopeLine(), 0, SP);
    return DL;
  };
  {
    IRBuilder<> T(Guarded(&*IP));
    T.SetCurrentDebugLocation(LocOf(nullptr));
    // Where the function returns to: a frame of its caller even when that one is not
    // instrumented (libstdc++'s thread trampoline, libc's call of `main`).
    Value *Ret = T.CreateIntrinsic(Intrinsic::returnaddress, {}, {T.getInt32(0)});
    Value *D = T.CreateCall(cast<FunctionType>(unwrap(enterTy)), unwrap(enter), {Ret});
    if (Depth)
      T.CreateStore(D, Depth);
  }
  for (unsigned i = 0; i < n; i++) {
    auto *C = dyn_cast_or_null<Instruction>(unwrap(calls[i]));
    if (!C || C->getFunction() != F)
      continue;
    IRBuilder<> T(Guarded(C));
    T.SetCurrentDebugLocation(LocOf(C));
    T.CreateCall(cast<FunctionType>(unwrap(callTy)), unwrap(call), {unwrap(sites[i])});
  }
  for (ReturnInst *R : Rets) {
    IRBuilder<> T(Guarded(R));
    T.SetCurrentDebugLocation(LocOf(R));
    T.CreateCall(cast<FunctionType>(unwrap(leaveTy)), unwrap(leave));
  }
  for (LandingPadInst *L : Pads) {
    IRBuilder<> T(Guarded(L->getNextNode()));
    T.SetCurrentDebugLocation(LocOf(L));
    Value *D = T.CreateLoad(T.getInt32Ty(), Depth);
    T.CreateCall(cast<FunctionType>(unwrap(unwoundTy)), unwrap(unwound), {D});
  }
  return 1;
}

// Puts the hook call `call` (a plain access) behind the inlined checks of the coverage tables
// (`guard_access`): the call runs only when the calling thread has no table (both thread-local
// pointers `*cover` and `*replay` are null) or its table does not hold the `size` bytes at the
// call's first argument with a kind that covers the access (`write`: written bytes only; a read:
// read or written). A table's layout is `ilgen_trace::abi::COVER_TLS`'s: word 0 the epoch, word 1
// the site mask, then `entries` entries of (tag, read bits | written bits << 32) per `granule`
// bytes. Recording's (`cover`) is keyed by granule; replay's (`replay`, read only where
// recording's pointer is null, so that recording's check runs no instruction more) also by the
// site pointer at argument `site_arg`: its bits `(site << site_shift) & site_mask` are in the tag,
// and spread the granule's entry (`^ (bits >> spread_shift) * spread`). `size` is at most
// `granule`; an access that spans two granules calls the hook.
extern "C" void ilgen_guard_access(LLVMValueRef call, LLVMValueRef cover, LLVMValueRef replay,
                                   uint64_t size, int write, uint64_t granule, uint64_t entries,
                                   unsigned site_arg, unsigned site_shift, uint64_t site_mask,
                                   unsigned spread_shift, uint64_t spread) {
  auto *CI = cast<CallInst>(unwrap(call));
  Function *F = CI->getFunction();
  LLVMContext &Ctx = F->getContext();
  BasicBlock *Head = CI->getParent();
  BasicBlock *Tail = Head->splitBasicBlock(std::next(CI->getIterator()), "ilgen.covered");
  BasicBlock *Slow = Head->splitBasicBlock(CI->getIterator(), "ilgen.record");
  BasicBlock *Probe = BasicBlock::Create(Ctx, "ilgen.probe", F, Slow);
  BasicBlock *Other = BasicBlock::Create(Ctx, "ilgen.other", F, Slow);
  BasicBlock *Replay = BasicBlock::Create(Ctx, "ilgen.replay", F, Slow);
  Head->getTerminator()->eraseFromParent();
  IRBuilder<> B(Head);
  B.SetCurrentDebugLocation(CI->getDebugLoc());
  Type *I64 = B.getInt64Ty();
  Type *Ptr = B.getPtrTy();
  auto Table = [&](LLVMValueRef G, const char *Name) {
    auto *TLS = cast<GlobalVariable>(unwrap(G));
    return B.CreateLoad(Ptr, B.CreateThreadLocalAddress(TLS), Name);
  };
  Value *Cover = Table(cover, "ilgen.cover");
  B.CreateCondBr(B.CreateIsNull(Cover), Other, Probe,
                 MDBuilder(Ctx).createBranchWeights(1, 1 << 20));
  unsigned GranuleBits = Log2_64(granule);
  unsigned IndexBits = Log2_64(entries);
  // One table's check: held when the tag at the granule's entry (moved by `Spread`) is `Key`,
  // the access stays in its granule, and its bytes were kept with a kind that covers it.
  auto Check = [&](Value *T, Value *Site, Value *Spread) {
    Value *Addr = B.CreatePtrToInt(CI->getArgOperand(0), I64);
    Value *Offset = B.CreateAnd(Addr, granule - 1);
    Value *Granule = B.CreateLShr(Addr, GranuleBits);
    LoadInst *Epoch = B.CreateAlignedLoad(I64, T, Align(8), "ilgen.epoch");
    // Another thread may bump the epoch while this one runs (`thread::claim`, `replay::cover`).
    Epoch->setAtomic(AtomicOrdering::Monotonic);
    Value *Tag = B.CreateOr(Epoch, B.CreateLShr(Granule, IndexBits));
    Value *Index = Granule;
    if (Site) {
      Tag = B.CreateOr(Tag, Site, "ilgen.key");
      Index = B.CreateXor(Granule, Spread);
    }
    Value *Word = B.CreateAdd(B.CreateShl(B.CreateAnd(Index, entries - 1), 1), B.getInt64(2));
    Value *Entry = B.CreateInBoundsGEP(I64, T, Word);
    Value *Kept = B.CreateAlignedLoad(I64, Entry, Align(8), "ilgen.tag");
    Value *Kinds = B.CreateAlignedLoad(I64, B.CreateConstInBoundsGEP1_64(I64, Entry, 1), Align(8),
                                       "ilgen.kinds");
    Value *Have = B.CreateLShr(Kinds, 32);
    if (!write)
      Have = B.CreateOr(Have, Kinds);
    Value *Bits = B.CreateShl(B.getInt64((uint64_t(1) << size) - 1), Offset);
    Value *Hit = B.CreateAnd(
        B.CreateAnd(B.CreateICmpEQ(Kept, Tag), B.CreateICmpULE(Offset, B.getInt64(granule - size))),
        B.CreateICmpEQ(B.CreateAnd(Have, Bits), Bits), "ilgen.held");
    B.CreateCondBr(Hit, Tail, Slow);
  };
  B.SetInsertPoint(Probe);
  Check(Cover, nullptr, nullptr);
  B.SetInsertPoint(Other);
  Value *Replaying = Table(replay, "ilgen.rcover");
  B.CreateCondBr(B.CreateIsNull(Replaying), Slow, Replay);
  B.SetInsertPoint(Replay);
  Value *Site = B.CreateAnd(
      B.CreateShl(B.CreatePtrToInt(CI->getArgOperand(site_arg), I64), site_shift), site_mask);
  Value *Spread = B.CreateMul(B.CreateLShr(Site, spread_shift), B.getInt64(spread));
  Check(Replaying, Site, Spread);
}
