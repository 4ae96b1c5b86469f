// Package priority lowers the operating system's priority of the thread
// running a goroutine, for work that must not delay requests a person
// waits for: a heavy request admitted by the server's gate. The Go
// scheduler has no priorities; the kernel's apply between threads, so a
// goroutine whose thread is lowered yields the CPUs to the others
// whenever more threads want one than there are CPUs
// (server.SpareProcessor sees that there can be). It still holds its
// processor (P) meanwhile, so only work that the runtime is given a P
// for beside the light requests' should run lowered: a lowered capture
// recorder, tried for #34, held a P for half of a trace's 12 s while the
// kernel ran other threads, and light reads queued for the Ps left.
package priority

// Lowered is the nice value of a lowered thread, so the kernel runs a
// normal thread first whenever both want a processor: its weight is a
// ninth of a normal thread's (110 against 1024). Not the lowest (19, a
// weight of 15): that would leave lowered work about 1.5% of a processor
// beside any busy process of normal priority — a test runner's workers,
// say, the very client waiting for it (the safety benchmark ran 414 s at
// nice 19 on a loaded machine). With the heavy-work gate alone, the one
// admitted heavy request (a Firestore create of a 100,000-element list
// checked by hasAll) still kept a light read waiting for a processor at
// the operating system's level on two cores (#34: the light read's p99
// went from 1.9× to 8× its quiet p99 from run to run).
const Lowered = 10
