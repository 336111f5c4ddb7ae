/* The cache of cache.py in C, for massif: golden (c).

       cc -g -O0 -o cache cache.c && ./cache MODE

   render(i) allocates a block of 64 KiB; baseline frees each block once
   16 newer ones exist, candidate keeps all 128 until exit (8 MiB retained
   instead of 1 MiB). Both print the same sum (validate.py checks it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 128
#define SIZE (64 << 10)

static unsigned char *cache[BLOCKS];

__attribute__((noinline)) static unsigned char *render(int i) {
	unsigned char *b = malloc(SIZE);
	if (b != NULL)
		memset(b, i % 251, SIZE);
	return b;
}

int main(int argc, char **argv) {
	if (argc != 2 || (strcmp(argv[1], "baseline") != 0 && strcmp(argv[1], "candidate") != 0)) {
		fprintf(stderr, "usage: cache baseline|candidate\n");
		return 2;
	}
	int keep = strcmp(argv[1], "candidate") == 0 ? BLOCKS : 16;
	unsigned long sum = 0;
	for (int i = 0; i < BLOCKS; i++) {
		cache[i] = render(i);
		if (cache[i] == NULL)
			return 1;
		for (int j = 0; j < SIZE; j += 4096)
			sum += cache[i][j];
		if (i >= keep) {
			free(cache[i - keep]);
			cache[i - keep] = NULL;
		}
	}
	printf("%lu\n", sum);
	return 0;
}
