#!/usr/bin/env Rscript
# Export the real-data benchmark's lifelong problems from the R package `survival` as small
# CSV files, one per task (see README.md next to this script for the slicing, columns, source
# and licence).
#
# Usage (from any working directory; needs r-base-core and r-cran-survival, which
# scripts/setup.sh does not install: the CSV files are committed):
#   Rscript bench/real/data/export.R
#
# Output, written next to this script (deterministic: rows keep the data set's order):
#   rotterdam-<years>.csv   breast cancer surgery, by year of surgery; target death5
#   nwtco-study<k>-stage<s>.csv   Wilms' tumour, by trial and stage; target rel

suppressPackageStartupMessages(library(survival))

script_dir <- function() {
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg) == 0) stop("run this script with Rscript so that its location is known")
  dirname(normalizePath(sub("^--file=", "", file_arg[1])))
}
out <- script_dir()

write_task <- function(df, name) {
  write.csv(df, file.path(out, paste0(name, ".csv")), row.names = FALSE, quote = FALSE, na = "")
  cat(sprintf("%-28s %5d rows, target = 1: %4d\n", name, nrow(df), sum(df[[ncol(df)]])))
}

# rotterdam: death within 5 years (1826 days) of surgery. A patient censored before 5 years
# has no label and is left out. rtime and recur (recurrence, after surgery) and dtime leak the
# outcome; pid and year are dropped (year slices the tasks).
r <- rotterdam
five_years <- 1826
labelled <- (r$death == 1 & r$dtime <= five_years) | r$dtime > five_years
r <- r[labelled, ]
r$death5 <- as.integer(r$death == 1 & r$dtime <= five_years)
r$size <- as.integer(r$size) - 1L  # "<=20", "20-50", ">50" -> 0, 1, 2
cols <- c("age", "meno", "size", "grade", "nodes", "pgr", "er", "hormon", "chemo", "death5")
windows <- list(c(1978, 1985), c(1986, 1987), c(1988, 1988), c(1989, 1989), c(1990, 1990),
                c(1991, 1991), c(1992, 1993))
for (w in windows) {
  name <- if (w[1] == w[2]) sprintf("rotterdam-%d", w[1]) else sprintf("rotterdam-%d-%d", w[1], w[2])
  write_task(r[r$year >= w[1] & r$year <= w[2], cols], name)
}

# nwtco: relapse, by trial (NWTS-3, NWTS-4) and stage (1-4). edrel (time to relapse) leaks the
# outcome; seqno and in.subcohort (a case-cohort sampling flag) are not patient data; study and
# stage slice the tasks.
n <- nwtco
for (k in c(3, 4)) {
  for (s in 1:4) {
    write_task(n[n$study == k & n$stage == s, c("instit", "histol", "age", "rel")], sprintf("nwtco-study%d-stage%d", k, s))
  }
}
