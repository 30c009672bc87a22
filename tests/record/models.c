/* Emits one event of the nosv model and one mark through the libovni API,
 * to check --events: unselected models never reach the stream. */
#include <ovni.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	ovni_proc_init(1, "host.models", getpid());
	ovni_thread_init((pid_t)syscall(SYS_gettid));
	struct ovni_ev ev = { 0 };
	ovni_ev_set_mcv(&ev, "VTx");
	ovni_ev_set_clock(&ev, ovni_clock_now());
	uint32_t task = 1;
	uint32_t body = 2;
	ovni_payload_add(&ev, (const uint8_t *)&task, 4);
	ovni_payload_add(&ev, (const uint8_t *)&body, 4);
	ovni_ev_emit(&ev);
	ovni_mark_type(1, 0, "m");
	ovni_mark_set(1, 5);
	return 0;
}
