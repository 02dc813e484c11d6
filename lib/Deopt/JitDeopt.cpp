//===- JitDeopt.cpp - Stack maps of ORC-linked code -----------------------===//
//
// On ELF, `.llvm_stackmaps` is an allocated section, so JITLink gives it
// memory, but nothing refers to it: dead stripping would drop it. A plugin of
// the ObjectLinkingLayer keeps its blocks alive (before pruning), copies them
// once their function addresses are fixed up, and registers the copy when
// the object is emitted, under the object's resource key, so that removing
// the code (a JITDylib cleared, the JIT destroyed) forgets its records.
//
//===----------------------------------------------------------------------===//
#include "jitlock/Deopt.h"

#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"

#include <map>
#include <mutex>

using namespace llvm;
using namespace jitlock::deopt;

namespace {

constexpr StringLiteral SectionName = ".llvm_stackmaps";

class StackMapPlugin : public orc::ObjectLinkingLayer::Plugin {
public:
  void modifyPassConfig(orc::MaterializationResponsibility &MR,
                        jitlink::LinkGraph &G,
                        jitlink::PassConfiguration &Config) override {
    if (!G.findSectionByName(SectionName))
      return;
    Config.PrePrunePasses.push_back([](jitlink::LinkGraph &G) {
      jitlink::Section *S = G.findSectionByName(SectionName);
      for (jitlink::Block *B : S->blocks())
        G.addAnonymousSymbol(*B, 0, B->getSize(), /*IsCallable=*/false,
                             /*IsLive=*/true);
      return Error::success();
    });
    Config.PostFixupPasses.push_back([this, &MR](jitlink::LinkGraph &G) {
      jitlink::Section *S = G.findSectionByName(SectionName);
      std::vector<std::vector<uint8_t>> Copies;
      for (jitlink::Block *B : S->blocks()) {
        ArrayRef<char> Content = B->getContent();
        Copies.emplace_back(Content.begin(), Content.end());
      }
      std::lock_guard<std::mutex> G2(Lock);
      Pending[&MR] = std::move(Copies);
      return Error::success();
    });
  }

  Error notifyEmitted(orc::MaterializationResponsibility &MR) override {
    std::vector<std::vector<uint8_t>> Copies;
    {
      std::lock_guard<std::mutex> G(Lock);
      auto It = Pending.find(&MR);
      if (It == Pending.end())
        return Error::success();
      Copies = std::move(It->second);
      Pending.erase(It);
    }
    return MR.withResourceKeyDo([&](orc::ResourceKey K) -> Error {
      for (const std::vector<uint8_t> &Bytes : Copies) {
        std::string Message;
        if (!StackMapTable::global().addSection(Bytes, K, Message))
          return make_error<StringError>("deopt: " + Message,
                                         inconvertibleErrorCode());
      }
      return Error::success();
    });
  }

  Error notifyFailed(orc::MaterializationResponsibility &MR) override {
    std::lock_guard<std::mutex> G(Lock);
    Pending.erase(&MR);
    return Error::success();
  }

  Error notifyRemovingResources(orc::JITDylib &, orc::ResourceKey K) override {
    StackMapTable::global().removeSections(K);
    return Error::success();
  }

  void notifyTransferringResources(orc::JITDylib &, orc::ResourceKey Dst,
                                   orc::ResourceKey Src) override {
    StackMapTable::global().transferSections(Src, Dst);
  }

private:
  std::mutex Lock;
  std::map<orc::MaterializationResponsibility *,
           std::vector<std::vector<uint8_t>>>
      Pending;
};

} // namespace

Error jitlock::deopt::enableDeopt(orc::LLJIT &J) {
  auto *Linker = dyn_cast<orc::ObjectLinkingLayer>(&J.getObjLinkingLayer());
  if (!Linker)
    return make_error<StringError>(
        "deopt: the JIT does not link with JITLink (ObjectLinkingLayer), so "
        "its stack maps cannot be captured",
        inconvertibleErrorCode());
  Linker->addPlugin(std::make_unique<StackMapPlugin>());
  orc::SymbolMap Entry;
  Entry[J.mangleAndIntern("__llvm_deoptimize")] = orc::ExecutorSymbolDef(
      orc::ExecutorAddr::fromPtr(deoptEntryAddress()),
      JITSymbolFlags::Exported | JITSymbolFlags::Callable);
  return J.getMainJITDylib().define(orc::absoluteSymbols(std::move(Entry)));
}
