/* SPDX-License-Identifier: MIT */
/* A sorted linked list of longs for -fgnu-tm programs (test and bench). */
#ifndef ITM_LIST_H
#define ITM_LIST_H

#include <stdlib.h>

struct node {
	long key;
	struct node *next;
};

static struct node head = { -1, NULL };

__attribute__((transaction_safe)) static int insert(long key)
{
	struct node *prev = &head, *cur = head.next, *n;

	while (cur != NULL && cur->key < key) {
		prev = cur;
		cur = cur->next;
	}
	if (cur != NULL && cur->key == key)
		return 0;
	n = malloc(sizeof(*n));
	n->key = key;
	n->next = cur;
	prev->next = n;
	return 1;
}

__attribute__((transaction_safe)) static int erase(long key)
{
	struct node *prev = &head, *cur = head.next;

	while (cur != NULL && cur->key < key) {
		prev = cur;
		cur = cur->next;
	}
	if (cur == NULL || cur->key != key)
		return 0;
	prev->next = cur->next;
	free(cur);
	return 1;
}

__attribute__((transaction_safe)) static int contains(long key)
{
	struct node *cur = head.next;

	while (cur != NULL && cur->key < key)
		cur = cur->next;
	return cur != NULL && cur->key == key;
}

#endif /* ITM_LIST_H */
