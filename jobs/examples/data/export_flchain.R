#!/usr/bin/env Rscript
# Export the `flchain` data set from the R package `survival` as small CSV
# files for the lbo quickstart example, sliced by the year the blood sample
# was taken.
#
# Usage (from any working directory):
#   Rscript jobs/examples/data/export_flchain.R
#
# Output, written next to this script:
#   flchain-1995.csv       sample.yr == 1995
#   flchain-1996.csv       sample.yr == 1996
#   flchain-1997-2003.csv  sample.yr in 1997..2003
#
# Columns: age,sex,kappa,lambda,flc_grp,creatinine,mgus,death
#   sex is encoded 0 = F, 1 = M; a missing creatinine is an empty field;
#   death (0/1) is the prediction target. futime, chapter and sample.yr are
#   dropped (futime and chapter leak the outcome). The output is
#   deterministic: rows keep the order of the original data frame. All columns
#   are numeric, so nothing is quoted.

suppressPackageStartupMessages(library(survival))

script_dir <- function() {
  file_arg <- grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)
  if (length(file_arg) == 0) {
    stop("run this script with Rscript so that its location is known")
  }
  dirname(normalizePath(sub("^--file=", "", file_arg[1])))
}

as_table <- function(d) {
  data.frame(
    age        = d$age,
    sex        = as.integer(d$sex == "M"),
    kappa      = d$kappa,
    lambda     = d$lambda,
    flc_grp    = as.integer(d$flc.grp),
    creatinine = d$creatinine,
    mgus       = as.integer(d$mgus),
    death      = as.integer(d$death)
  )
}

slices <- list(
  "flchain-1995.csv"      = 1995,
  "flchain-1996.csv"      = 1996,
  "flchain-1997-2003.csv" = 1997:2003
)

options(scipen = 100)  # plain numbers, never scientific notation
data(flchain, package = "survival")
out_dir <- script_dir()

for (name in names(slices)) {
  rows <- flchain[flchain$sample.yr %in% slices[[name]], ]
  path <- file.path(out_dir, name)
  write.csv(as_table(rows), path, row.names = FALSE, na = "", quote = FALSE)
  cat(sprintf("%s: %d rows, %d deaths\n", path, nrow(rows), sum(rows$death)))
}
