/* pdtree.c - perf's red-black tree of symbols, node for node.
 *
 * Overlapping symbols (a symbol inside a longer one, duplicates left by
 * a partial load, PLT entries over an extended symbol) make perf's answer
 * depend on the shape of its tree: symbols__find returns the first node
 * on the search path that holds the address.  So the tree is perf's own:
 * the kernel's lib/rbtree.c insert and erase transliterated, keyed on
 * start with equal keys going right, fed in perf's order.
 */
#include "pdsyms.h"
#include "base/util.h"

#define N(i) (t->nodes[i])

static bool is_red(const struct pd_symtab *t, uint32_t i)
{
	return i != PD_NIL && !t->nodes[i].black;
}

static void change_child(struct pd_symtab *t, uint32_t old, uint32_t new_, uint32_t parent)
{
	if (parent != PD_NIL) {
		if (N(parent).left == old)
			N(parent).left = new_;
		else
			N(parent).right = new_;
	} else {
		t->root = new_;
	}
}

/* __rb_rotate_set_parents: `new_` takes `old`'s place and color; `old`
 * becomes its child, black or red as asked. */
static void rotate_set_parents(struct pd_symtab *t, uint32_t old, uint32_t new_, bool black)
{
	uint32_t parent = N(old).parent;

	N(new_).parent = parent;
	N(new_).black = N(old).black;
	N(old).parent = new_;
	N(old).black = black;
	change_child(t, old, new_, parent);
}

/* The child of `n` on side `dir` (0 left, 1 right): the kernel's code
 * is written twice, once per side; here each piece is written once with
 * its sides named L (the side the walk came from) and R = !L. */
static uint32_t *kid(struct pd_symtab *t, uint32_t n, bool dir)
{
	return dir ? &N(n).right : &N(n).left;
}

/* __rb_insert: `parent` sits on side L of its red-violated grandparent. */
static void insert_color(struct pd_symtab *t, uint32_t node)
{
	uint32_t parent = N(node).parent, gparent, tmp;

	for (;;) {
		if (parent == PD_NIL) {
			N(node).black = 1;
			break;
		}
		if (N(parent).black)
			break;
		gparent = N(parent).parent;
		bool L = parent == N(gparent).right, R = !L;
		tmp = *kid(t, gparent, R);
		if (is_red(t, tmp)) {
			N(tmp).black = 1;
			N(parent).black = 1;
			node = gparent;
			parent = N(node).parent;
			N(node).black = 0;
			continue;
		}
		tmp = *kid(t, parent, R);
		if (node == tmp) {
			tmp = *kid(t, node, L);
			*kid(t, parent, R) = tmp;
			*kid(t, node, L) = parent;
			if (tmp != PD_NIL) {
				N(tmp).parent = parent;
				N(tmp).black = 1;
			}
			N(parent).parent = node;
			N(parent).black = 0;
			parent = node;
			tmp = *kid(t, node, R);
		}
		*kid(t, gparent, L) = tmp;
		*kid(t, parent, R) = gparent;
		if (tmp != PD_NIL) {
			N(tmp).parent = gparent;
			N(tmp).black = 1;
		}
		rotate_set_parents(t, gparent, parent, false);
		break;
	}
}

void pd_tree_insert(struct pd_symtab *t, uint32_t i)
{
	uint32_t parent = PD_NIL, *link = &t->root;

	PL_GROW(t->nodes, t->nodes_cap, (size_t)i + 1);
	while (*link != PD_NIL) {
		parent = *link;
		link = t->v[i].start < t->v[parent].start ? &N(parent).left : &N(parent).right;
	}
	N(i).parent = parent;
	N(i).left = N(i).right = PD_NIL;
	N(i).black = 0;
	*link = i;
	insert_color(t, i);
}

/* ____rb_erase_color: `node` (PD_NIL at first) is on side L of
 * `parent`, its sibling on side R. */
static void erase_color(struct pd_symtab *t, uint32_t parent)
{
	uint32_t node = PD_NIL, sibling, tmp1, tmp2;

	for (;;) {
		bool L = node == N(parent).right, R = !L;
		sibling = *kid(t, parent, R);
		if (is_red(t, sibling)) {
			tmp1 = *kid(t, sibling, L);
			*kid(t, parent, R) = tmp1;
			*kid(t, sibling, L) = parent;
			N(tmp1).parent = parent;
			N(tmp1).black = 1;
			rotate_set_parents(t, parent, sibling, false);
			sibling = tmp1;
		}
		tmp1 = *kid(t, sibling, R);
		if (!is_red(t, tmp1)) {
			tmp2 = *kid(t, sibling, L);
			if (!is_red(t, tmp2)) {
				N(sibling).black = 0;
				if (is_red(t, parent)) {
					N(parent).black = 1;
				} else {
					node = parent;
					parent = N(node).parent;
					if (parent != PD_NIL)
						continue;
				}
				break;
			}
			tmp1 = *kid(t, tmp2, R);
			*kid(t, sibling, L) = tmp1;
			*kid(t, tmp2, R) = sibling;
			*kid(t, parent, R) = tmp2;
			if (tmp1 != PD_NIL) {
				N(tmp1).parent = sibling;
				N(tmp1).black = 1;
			}
			tmp1 = sibling;
			sibling = tmp2;
		}
		tmp2 = *kid(t, sibling, L);
		*kid(t, parent, R) = tmp2;
		*kid(t, sibling, L) = parent;
		N(tmp1).parent = sibling;
		N(tmp1).black = 1;
		if (tmp2 != PD_NIL)
			N(tmp2).parent = parent;
		rotate_set_parents(t, parent, sibling, true);
		break;
	}
}

void pd_tree_erase(struct pd_symtab *t, uint32_t node)
{
	uint32_t child = N(node).right, tmp = N(node).left, parent, rebalance;

	if (tmp == PD_NIL) {
		parent = N(node).parent;
		change_child(t, node, child, parent);
		if (child != PD_NIL) {
			N(child).parent = parent;
			N(child).black = N(node).black;
			rebalance = PD_NIL;
		} else {
			rebalance = N(node).black ? parent : PD_NIL;
		}
	} else if (child == PD_NIL) {
		parent = N(node).parent;
		N(tmp).parent = parent;
		N(tmp).black = N(node).black;
		change_child(t, node, tmp, parent);
		rebalance = PD_NIL;
	} else {
		uint32_t successor = child, child2;
		tmp = N(child).left;
		if (tmp == PD_NIL) {
			parent = successor;
			child2 = N(successor).right;
		} else {
			do {
				parent = successor;
				successor = tmp;
				tmp = N(tmp).left;
			} while (tmp != PD_NIL);
			child2 = N(successor).right;
			N(parent).left = child2;
			N(successor).right = child;
			N(child).parent = successor;
		}
		tmp = N(node).left;
		N(successor).left = tmp;
		N(tmp).parent = successor;
		change_child(t, node, successor, N(node).parent);
		if (child2 != PD_NIL) {
			N(child2).parent = parent;
			N(child2).black = 1;
			rebalance = PD_NIL;
		} else {
			rebalance = N(successor).black ? parent : PD_NIL;
		}
		N(successor).parent = N(node).parent;
		N(successor).black = N(node).black;
	}
	t->v[node].erased = 1;
	if (rebalance != PD_NIL)
		erase_color(t, rebalance);
}

uint32_t pd_tree_first(const struct pd_symtab *t)
{
	uint32_t n = t->root;

	if (n == PD_NIL)
		return PD_NIL;
	while (N(n).left != PD_NIL)
		n = N(n).left;
	return n;
}

uint32_t pd_tree_next(const struct pd_symtab *t, uint32_t n)
{
	uint32_t parent;

	if (N(n).right != PD_NIL) {
		n = N(n).right;
		while (N(n).left != PD_NIL)
			n = N(n).left;
		return n;
	}
	while ((parent = N(n).parent) != PD_NIL && n == N(parent).right)
		n = parent;
	return parent;
}
