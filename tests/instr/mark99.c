/* A libovni program that declares mark 99 itself, then sleeps inside it:
 * the shim must leave that thread's mark 99 to the program. */
#include <ovni.h>
#include <pthread.h>
#include <unistd.h>
int main(void)
{
	ovni_mark_type(99, OVNI_MARK_STACK, "Mine");
	ovni_mark_label(99, 1, "one");
	ovni_mark_push(99, 1);
	usleep(1000);
	ovni_mark_pop(99, 1);
	return 0;
}
