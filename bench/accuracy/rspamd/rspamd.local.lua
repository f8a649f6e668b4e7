-- Accuracy harness: BAYES_PROB, a score-0 postfilter whose option is the Bayes classifier's spam
-- probability with %.17g (the stock BAYES_SPAM/BAYES_HAM options round it to a percentage).
rspamd_config:register_symbol({
  name = 'BAYES_PROB',
  type = 'postfilter',
  score = 0.0,
  group = 'statistics',
  description = 'Bayes spam probability at full precision',
  callback = function(task)
    local prob = task:get_mempool():get_variable('bayes_prob', 'double')
    if prob then
      task:insert_result('BAYES_PROB', 0.0, string.format('%.17g', prob))
    end
  end,
})
