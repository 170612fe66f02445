# install.mk - make install / make uninstall, included by the Makefile.
#
#   make install   [PREFIX=/usr/local] [DESTDIR=/staging/root]
#   make uninstall [PREFIX=/usr/local] [DESTDIR=/staging/root]
#
# Installs:
#   $(PREFIX)/lib/sockmeter/libsockmeter.so      the preload library
#   $(PREFIX)/lib/sockmeter/sockmeter-recover    sockmeter recover
#   $(PREFIX)/bin/sockmeter                      the launcher (finds the
#                                                library in ../lib/sockmeter)
#   $(PREFIX)/bin/sockmeter-report               report, CSV/JSON, plots
#   $(PREFIX)/bin/sockmeter-top                  the live view (sockmeter top)
#   $(PREFIX)/lib/sockmeter/sockmeter_log.py     the module both tools share
#                                                (they look for it there,
#                                                or beside themselves)
#   $(PREFIX)/share/man/man1/sockmeter.1
#   $(PREFIX)/share/man/man5/sockmeter.ini.5
#   $(PREFIX)/share/doc/sockmeter/sockmeter.ini  the example config
# The example config goes to the doc directory, not /etc: the library reads
# no config file by default, only the one SOCKMETER_CONFIG names, so a file
# in /etc would look active while it is not.  Copy it and point
# SOCKMETER_CONFIG at the copy.
#
# uninstall removes exactly these files, and the two directories that are
# sockmeter's own (lib/sockmeter, share/doc/sockmeter) when empty.  The tools
# write no bytecode cache beside the module (sys.dont_write_bytecode), so
# nothing else appears in lib/sockmeter.

BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL ?= install

SM_BINDIR := $(DESTDIR)$(PREFIX)/bin
SM_LIBDIR := $(DESTDIR)$(PREFIX)/lib/sockmeter
SM_MANDIR := $(DESTDIR)$(PREFIX)/share/man
SM_DOCDIR := $(DESTDIR)$(PREFIX)/share/doc/sockmeter
SM_SCRIPTS := sockmeter sockmeter-report sockmeter-top

.PHONY: install uninstall
install: $(BUILD)/libsockmeter.so $(BUILD)/sockmeter-recover
	$(INSTALL) -d "$(SM_BINDIR)" "$(SM_LIBDIR)" "$(SM_MANDIR)/man1" \
		"$(SM_MANDIR)/man5" "$(SM_DOCDIR)"
	$(INSTALL) -m 0644 $(BUILD)/libsockmeter.so "$(SM_LIBDIR)/libsockmeter.so"
	$(INSTALL) -m 0755 $(BUILD)/sockmeter-recover "$(SM_LIBDIR)/sockmeter-recover"
	$(INSTALL) -m 0755 $(addprefix scripts/,$(SM_SCRIPTS)) "$(SM_BINDIR)/"
	$(INSTALL) -m 0644 scripts/sockmeter_log.py "$(SM_LIBDIR)/sockmeter_log.py"
	$(INSTALL) -m 0644 man/sockmeter.1 "$(SM_MANDIR)/man1/sockmeter.1"
	$(INSTALL) -m 0644 man/sockmeter.ini.5 "$(SM_MANDIR)/man5/sockmeter.ini.5"
	$(INSTALL) -m 0644 config/sockmeter.ini "$(SM_DOCDIR)/sockmeter.ini"

uninstall:
	rm -f "$(SM_LIBDIR)/libsockmeter.so" "$(SM_LIBDIR)/sockmeter_log.py" \
		"$(SM_LIBDIR)/sockmeter-recover" \
		$(foreach s,$(SM_SCRIPTS),"$(SM_BINDIR)/$(s)") \
		"$(SM_MANDIR)/man1/sockmeter.1" "$(SM_MANDIR)/man5/sockmeter.ini.5" \
		"$(SM_DOCDIR)/sockmeter.ini"
	rmdir "$(SM_LIBDIR)" "$(SM_DOCDIR)" 2>/dev/null || true
