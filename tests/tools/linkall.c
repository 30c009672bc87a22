/* Built with every object of libovnitools.a (--whole-archive): the library
 * links alone, without the binary's embedded shim or any cmd/ symbol. */
int main(void)
{
	return 0;
}
