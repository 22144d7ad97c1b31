std = "luajit"
globals = { "vim" }
read_globals = { "bit" }
max_line_length = 120
exclude_files = { "target" }
