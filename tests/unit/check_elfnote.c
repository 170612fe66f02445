/*
 * check_elfnote.c - finding a note in a loaded image's program headers:
 * Go's build ID among other notes, the owner and type both matched, no
 * look without PT_PHDR or outside PT_LOAD, malformed sizes refused; and
 * this very program's own headers (a C program: no Go note, but its GNU
 * build ID is found).
 */
#include "../../core/elfnote.h"
#include "unit_util.h"

#include <sys/auxv.h>

/* A fake image: program headers at PH_OFF, notes at NOTE_OFF. */
#define PH_OFF	 64
#define NOTE_OFF 512
static _Alignas(8) unsigned char img[2048];

static size_t put_note_pad(size_t off, const char *name, uint32_t pad,
			   uint32_t type, uint32_t descsz)
{
	ElfW(Nhdr) h = { .n_namesz = (uint32_t)strlen(name) + 1 + pad,
			 .n_descsz = descsz,
			 .n_type = type };

	memcpy(img + off, &h, sizeof(h));
	off += sizeof(h);
	memset(img + off, 0, (h.n_namesz + 3) & ~3u);
	memcpy(img + off, name, strlen(name) + 1);
	off += (h.n_namesz + 3) & ~3u;
	memset(img + off, 0xab, descsz);
	return off + ((descsz + 3) & ~3u);
}

static size_t put_note(size_t off, const char *name, uint32_t type,
		       uint32_t descsz)
{
	return put_note_pad(off, name, 0, type, descsz);
}

/* Headers: PT_PHDR (if phdr), PT_LOAD of `load` bytes, PT_NOTE over the
 * notes [NOTE_OFF, end). */
static const ElfW(Phdr) *image(bool phdr, size_t load, size_t end)
{
	ElfW(Phdr) ph[3];
	size_t n = 0;

	memset(ph, 0, sizeof(ph));
	if (phdr)
		ph[n++] = (ElfW(Phdr)){ .p_type = PT_PHDR, .p_vaddr = PH_OFF };
	ph[n++] = (ElfW(Phdr)){ .p_type = PT_LOAD, .p_filesz = load };
	ph[n++] = (ElfW(Phdr)){ .p_type = PT_NOTE,
				.p_vaddr = NOTE_OFF,
				.p_filesz = end - NOTE_OFF,
				.p_align = 4 };
	memcpy(img + PH_OFF, ph, sizeof(ph));
	return (const ElfW(Phdr) *)(img + PH_OFF);
}

START_TEST(test_go_note_after_others)
{
	size_t end = put_note(NOTE_OFF, "GNU", 3, 20);
	const ElfW(Phdr) *ph;

	end = put_note(end, "GNU", 1, 16);
	/* As Go's linker writes it: "Go\0\0", namesz 4. */
	end = put_note_pad(end, "Go", 1, ELFNOTE_GO_BUILDID, 83);
	ph = image(true, sizeof(img), end);
	ck_assert(elf_has_note(ph, 3, ELFNOTE_GO_OWNER, ELFNOTE_GO_BUILDID));
	ck_assert(elf_has_note(ph, 3, "GNU", 1));
	ck_assert(!elf_has_note(ph, 3, "Go", 5));
	ck_assert(!elf_has_note(ph, 3, "Gx", ELFNOTE_GO_BUILDID));
	ck_assert(!elf_has_note(ph, 3, "G", ELFNOTE_GO_BUILDID));
	/* A note cut off by its segment's end is not read. */
	ph = image(true, sizeof(img), end - 4);
	ck_assert(!elf_has_note(ph, 3, ELFNOTE_GO_OWNER, ELFNOTE_GO_BUILDID));
}
END_TEST

START_TEST(test_no_look_without_phdr_or_outside_load)
{
	size_t end = put_note(NOTE_OFF, "Go", ELFNOTE_GO_BUILDID, 8);

	ck_assert(!elf_has_note(image(false, sizeof(img), end), 2,
				ELFNOTE_GO_OWNER, ELFNOTE_GO_BUILDID));
	/* The notes reach past the loaded bytes. */
	ck_assert(!elf_has_note(image(true, end - 1, end), 3,
				ELFNOTE_GO_OWNER, ELFNOTE_GO_BUILDID));
	ck_assert(elf_has_note(image(true, end, end), 3, ELFNOTE_GO_OWNER,
			       ELFNOTE_GO_BUILDID));
	ck_assert(!elf_has_note(NULL, 3, ELFNOTE_GO_OWNER, 4));
}
END_TEST

START_TEST(test_malformed_sizes)
{
	size_t end = put_note(NOTE_OFF, "GNU", 3, 20);
	ElfW(Nhdr) h;

	put_note(end, "Go", ELFNOTE_GO_BUILDID, 8);
	/* The first note claims a huge name, then a huge description: the
	 * walk stops there. */
	memcpy(&h, img + NOTE_OFF, sizeof(h));
	h.n_namesz = 0xfffffff0u;
	memcpy(img + NOTE_OFF, &h, sizeof(h));
	ck_assert(!elf_has_note(image(true, sizeof(img), end + 24), 3,
				ELFNOTE_GO_OWNER, ELFNOTE_GO_BUILDID));
	h.n_namesz = 4;
	h.n_descsz = 0xfffffffdu;
	memcpy(img + NOTE_OFF, &h, sizeof(h));
	ck_assert(!elf_has_note(image(true, sizeof(img), end + 24), 3,
				ELFNOTE_GO_OWNER, ELFNOTE_GO_BUILDID));
}
END_TEST

START_TEST(test_this_program)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t n = getauxval(AT_PHNUM);

	ck_assert(!elf_has_note(ph, n, ELFNOTE_GO_OWNER, ELFNOTE_GO_BUILDID));
	/* gcc links with a GNU build ID note (NT_GNU_BUILD_ID) by default. */
	ck_assert(elf_has_note(ph, n, "GNU", NT_GNU_BUILD_ID));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("elfnote");
	TCase *tc = tcase_create("elfnote");

	tcase_add_test(tc, test_go_note_after_others);
	tcase_add_test(tc, test_no_look_without_phdr_or_outside_load);
	tcase_add_test(tc, test_malformed_sizes);
	tcase_add_test(tc, test_this_program);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
