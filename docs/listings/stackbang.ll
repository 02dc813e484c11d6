; stackbang.ll
declare void @work(ptr)

define void @checked(ptr %p) "jitlock-stack-bang" nounwind {
entry:
  call void @work(ptr %p)
  call void @work(ptr %p)
  ret void
}
