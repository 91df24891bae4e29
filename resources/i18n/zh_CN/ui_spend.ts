<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AlertsDialog</name>
    <message>
        <source>Spend alerts</source>
        <translation>花费提醒</translation>
    </message>
    <message>
        <source>Left on overnight at</source>
        <translation>过夜提醒时间</translation>
    </message>
    <message>
        <source>HH:MM, empty for no overnight alert</source>
        <translation>HH:MM，留空则不做过夜提醒</translation>
    </message>
    <message>
        <source>Snooze its alerts for 1 hour</source>
        <translation>暂停其提醒 1 小时</translation>
    </message>
    <message>
        <source>Mute its alerts</source>
        <translation>关闭其提醒</translation>
    </message>
</context>
<context>
    <name>BudgetDialog</name>
    <message>
        <source>Set a budget</source>
        <translation>设置预算</translation>
    </message>
    <message>
        <source>Daily</source>
        <translation>每日</translation>
    </message>
    <message>
        <source>Weekly</source>
        <translation>每周</translation>
    </message>
    <message>
        <source>Monthly</source>
        <translation>每月</translation>
    </message>
    <message>
        <source>Period</source>
        <translation>周期</translation>
    </message>
    <message>
        <source>All platforms</source>
        <translation>全部平台</translation>
    </message>
    <message>
        <source>Applies to</source>
        <translation>适用于</translation>
    </message>
    <message>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>币种</translation>
    </message>
    <message>
        <source>Alert at (%)</source>
        <translation>提醒阈值（%）</translation>
    </message>
    <message>
        <source>the budget</source>
        <translation>预算</translation>
    </message>
</context>
<context>
    <name>ChartTab</name>
    <message>
        <source>per day, last {n}</source>
        <translation>按天，最近 {n} 天</translation>
    </message>
    <message>
        <source>per week, last {n}</source>
        <translation>按周，最近 {n} 周</translation>
    </message>
    <message>
        <source>per month, last {n}</source>
        <translation>按月，最近 {n} 个月</translation>
    </message>
    <message>
        <source>Spend</source>
        <translation>花费</translation>
    </message>
    <message>
        <source>in</source>
        <translation>币种</translation>
    </message>
    <message>
        <source>Could not compute the chart: {error}</source>
        <translation>无法计算图表：{error}</translation>
    </message>
</context>
<context>
    <name>CsvImportDialog</name>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>refused: {errors}</source>
        <translation>已拒绝：{errors}</translation>
    </message>
    <message>
        <source>already in the ledger</source>
        <translation>账本中已有</translation>
    </message>
    <message>
        <source>will be imported</source>
        <translation>将导入</translation>
    </message>
    <message>
        <source>Import {file}</source>
        <translation>导入 {file}</translation>
    </message>
    <message>
        <source>Reading {path}…</source>
        <translation>正在读取 {path}…</translation>
    </message>
    <message>
        <source>Platform of rows that name none</source>
        <translation>未注明平台的行归入</translation>
    </message>
    <message>
        <source>Currency of rows that name none</source>
        <translation>未注明币种的行使用</translation>
    </message>
    <message>
        <source>Line</source>
        <translation>行号</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>What</source>
        <translation>内容</translation>
    </message>
    <message>
        <source>Rate</source>
        <translation>单价</translation>
    </message>
    <message>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>Could not read {path}: {error}</source>
        <translation>无法读取 {path}：{error}</translation>
    </message>
    <message>
        <source>%n rows will be imported, {refused} refused (they are not imported), {duplicates} already in the ledger.</source>
        <translation>将导入 %n 行，拒绝 {refused} 行（不会导入），{duplicates} 行账本中已有。</translation>
    </message>
    <message>
        <source>%n rows will be imported, {refused} refused (they are not imported).</source>
        <translation>将导入 %n 行，拒绝 {refused} 行（不会导入）。</translation>
    </message>
    <message>
        <source>The first {shown} of {total} rows: {summary} The others are checked as they are imported.</source>
        <translation>共 {total} 行中的前 {shown} 行：{summary}其余各行在导入时检查。</translation>
    </message>
    <message>
        <source>{summary} New platforms: {platforms}.</source>
        <translation>{summary}新平台：{platforms}。</translation>
    </message>
    <message>
        <source>Importing…</source>
        <translation>正在导入…</translation>
    </message>
    <message>
        <source>Saving the imported rows…</source>
        <translation>正在保存导入的记录…</translation>
    </message>
    <message>
        <source>Importing: line {line} of about {lines}…</source>
        <translation>正在导入：第 {line} 行，共约 {lines} 行…</translation>
    </message>
    <message>
        <source>Cancelling the import…</source>
        <translation>正在取消导入…</translation>
    </message>
</context>
<context>
    <name>ExperimentsTab</name>
    <message>
        <source>no success yet</source>
        <translation>尚无成功</translation>
    </message>
    <message>
        <source>Tag rentals with an experiment and mark the outcome (History → Experiment…).</source>
        <translation>为租用记录标注实验并标记结果（历史 → 实验…）。</translation>
    </message>
    <message>
        <source>Experiment</source>
        <translation>实验</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行次数</translation>
    </message>
    <message>
        <source>Successful</source>
        <translation>成功次数</translation>
    </message>
    <message>
        <source>Total cost</source>
        <translation>总费用</translation>
    </message>
    <message>
        <source>Cost per success</source>
        <translation>每次成功的费用</translation>
    </message>
</context>
<context>
    <name>OutcomeDialog</name>
    <message>
        <source>Experiment</source>
        <translation>实验</translation>
    </message>
    <message>
        <source>Experiment tag</source>
        <translation>实验标签</translation>
    </message>
    <message>
        <source>Outcome</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Notes</source>
        <translation>备注</translation>
    </message>
</context>
<context>
    <name>SpendChart</name>
    <message>
        <source>No spend in {currency} in this range.</source>
        <translation>此范围内没有以 {currency} 计的花费。</translation>
    </message>
    <message>
        <source>%n periods, {total} in all</source>
        <translation>%n 个周期，共 {total}</translation>
    </message>
</context>
<context>
    <name>SpendLabels</name>
    <message>
        <source>on-demand</source>
        <translation>按量计费</translation>
    </message>
    <message>
        <source>spot</source>
        <translation>竞价实例</translation>
    </message>
    <message>
        <source>weekly</source>
        <translation>包周</translation>
    </message>
    <message>
        <source>monthly</source>
        <translation>包月</translation>
    </message>
    <message>
        <source>bought</source>
        <translation>自购硬件</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已关机</translation>
    </message>
    <message>
        <source>(not decided)</source>
        <translation>（未定）</translation>
    </message>
    <message>
        <source>success</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>failure</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>rental</source>
        <translation>租用记录</translation>
    </message>
    <message>
        <source>storage</source>
        <translation>存储</translation>
    </message>
    <message>
        <source>traffic</source>
        <translation>流量</translation>
    </message>
    <message>
        <source>fee</source>
        <translation>服务费</translation>
    </message>
    <message>
        <source>credit</source>
        <translation>抵扣</translation>
    </message>
    <message>
        <source>stopped on the Spend page</source>
        <translation>在花费页面停止</translation>
    </message>
    <message>
        <source>released</source>
        <translation>已释放</translation>
    </message>
    <message>
        <source>price change</source>
        <translation>价格变动</translation>
    </message>
    <message>
        <source>restarted</source>
        <translation>已重启</translation>
    </message>
    <message>
        <source>gone</source>
        <translation>实例已不存在</translation>
    </message>
    <message>
        <source>imported</source>
        <translation>已导入</translation>
    </message>
    <message>
        <source>{amount}/week</source>
        <translation>{amount}/周</translation>
    </message>
    <message>
        <source>{amount}/month</source>
        <translation>{amount}/月</translation>
    </message>
</context>
<context>
    <name>SpendPage</name>
    <message>
        <source>Ledger and bills (*.csv *.tsv);;CSV files (*.csv);;Tab-separated (*.tsv);;All files (*)</source>
        <translation>账本和账单 (*.csv *.tsv);;CSV 文件 (*.csv);;制表符分隔 (*.tsv);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Last 30 days</source>
        <translation>最近 30 天</translation>
    </message>
    <message>
        <source>This month</source>
        <translation>本月</translation>
    </message>
    <message>
        <source>Last month</source>
        <translation>上月</translation>
    </message>
    <message>
        <source>This week</source>
        <translation>本周</translation>
    </message>
    <message>
        <source>This year</source>
        <translation>今年</translation>
    </message>
    <message>
        <source>All time</source>
        <translation>全部时间</translation>
    </message>
    <message>
        <source>Spend</source>
        <translation>花费</translation>
    </message>
    <message>
        <source>No platform to meter yet</source>
        <translation>还没有可计费的平台</translation>
    </message>
    <message>
        <source>Every rental is metered here from its start time, with budgets, alerts and reports. Add the platform you rent from (and its hosts) first.</source>
        <translation>每次租用都从开始时间起在这里计费，并提供预算、提醒和报表。请先添加你租用的平台（及其主机）。</translation>
    </message>
    <message>
        <source>Add a host</source>
        <translation>添加主机</translation>
    </message>
    <message>
        <source>Start rental…</source>
        <translation>开始租用…</translation>
    </message>
    <message>
        <source>Stop meter</source>
        <translation>停止计费</translation>
    </message>
    <message>
        <source>Budget…</source>
        <translation>预算…</translation>
    </message>
    <message>
        <source>Alerts…</source>
        <translation>提醒…</translation>
    </message>
    <message>
        <source>Import CSV…</source>
        <translation>导入 CSV…</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <source>&lt;b&gt;Running now&lt;/b&gt;</source>
        <translation>&lt;b&gt;正在运行&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Rental</source>
        <translation>租用</translation>
    </message>
    <message>
        <source>Platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>Billing</source>
        <translation>计费方式</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <source>Elapsed</source>
        <translation>已用时长</translation>
    </message>
    <message>
        <source>Cost so far</source>
        <translation>目前费用</translation>
    </message>
    <message>
        <source>Planned end</source>
        <translation>计划结束</translation>
    </message>
    <message>
        <source>Chart</source>
        <translation>图表</translation>
    </message>
    <message>
        <source>Experiments</source>
        <translation>实验</translation>
    </message>
    <message>
        <source>Period</source>
        <translation>时段</translation>
    </message>
    <message>
        <source>Tag</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>Experiment…</source>
        <translation>实验…</translation>
    </message>
    <message>
        <source>Ended</source>
        <translation>结束时间</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Hours</source>
        <translation>小时数</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>费用</translation>
    </message>
    <message>
        <source>Outcome</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Ended by</source>
        <translation>结束原因</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史</translation>
    </message>
    <message>
        <source>{mode}, {rate}</source>
        <translation>{mode}，{rate}</translation>
    </message>
    <message>
        <source>All platforms</source>
        <translation>全部平台</translation>
    </message>
    <message>
        <source>All GPUs</source>
        <translation>全部 GPU</translation>
    </message>
    <message>
        <source>All tags</source>
        <translation>全部标签</translation>
    </message>
    <message>
        <source>%n rentals (the newest shown): {totals}</source>
        <translation>%n 条租用记录（仅显示最新的）：{totals}</translation>
    </message>
    <message>
        <source>%n rentals: {totals}</source>
        <translation>%n 条租用记录：{totals}</translation>
    </message>
    <message>
        <source>Today {today} · this month {month} · burning {burn}</source>
        <translation>今天 {today} · 本月 {month} · 当前消耗 {burn}</translation>
    </message>
    <message>
        <source>Today {today} · this month {month} · nothing billing now</source>
        <translation>今天 {today} · 本月 {month} · 当前没有计费</translation>
    </message>
    <message>
        <source>{budget}: {percent}% — {spent} of {amount} · runs out {when} at this rate</source>
        <translation>{budget}：{percent}% — 已用 {spent} / {amount} · 按当前速度将于 {when} 用完</translation>
    </message>
    <message>
        <source>{budget}: {percent}% — {spent} of {amount}</source>
        <translation>{budget}：{percent}% — 已用 {spent} / {amount}</translation>
    </message>
    <message>
        <source>Select the running rental to stop.</source>
        <translation>请选择要停止计费的运行中租用。</translation>
    </message>
    <message>
        <source>Stop the meter</source>
        <translation>停止计费</translation>
    </message>
    <message>
        <source>Stop metering {rental} now, at {cost}?

This only ends the ledger&apos;s meter: release the instance on the platform too (the Release page checks your backups first).</source>
        <translation>现在停止 {rental} 的计费吗？当前费用 {cost}。

这只会结束账本中的计费：还需要在平台上释放实例（“释放”页面会先检查你的备份）。</translation>
    </message>
    <message>
        <source>Select a rental in the history first.</source>
        <translation>请先在历史中选择一条租用记录。</translation>
    </message>
    <message>
        <source>Import rentals</source>
        <translation>导入租用记录</translation>
    </message>
    <message>
        <source>Imported {rentals} rentals and {charges} charges ({refused} rows refused, {duplicates} already there).</source>
        <translation>已导入 {rentals} 条租用记录和 {charges} 条扣费记录（拒绝 {refused} 行，{duplicates} 行已存在）。</translation>
    </message>
    <message>
        <source>Export the ledger</source>
        <translation>导出账本</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>Exported {n} rows to {path}.</source>
        <translation>已导出 {n} 行到 {path}。</translation>
    </message>
    <message>
        <source>Could not export to {path}: {error}</source>
        <translation>无法导出到 {path}：{error}</translation>
    </message>
    <message>
        <source>{reason} (override: {override})</source>
        <translation>{reason}（强制执行理由：{override}）</translation>
    </message>
</context>
<context>
    <name>StartRentalDialog</name>
    <message>
        <source>Start a rental</source>
        <translation>开始租用</translation>
    </message>
    <message>
        <source>Platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>GPU model</source>
        <translation>GPU 型号</translation>
    </message>
    <message>
        <source>GPU count</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>Billing mode</source>
        <translation>计费方式</translation>
    </message>
    <message>
        <source>Rate</source>
        <translation>单价</translation>
    </message>
    <message>
        <source>per hour (per week or month for those plans), e.g. 0.39</source>
        <translation>每小时价格（包周、包月则为每周、每月价格），例如 0.39</translation>
    </message>
    <message>
        <source>the whole instance</source>
        <translation>整个实例</translation>
    </message>
    <message>
        <source>each GPU</source>
        <translation>每块 GPU</translation>
    </message>
    <message>
        <source>The rate is for</source>
        <translation>单价对应</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>币种</translation>
    </message>
    <message>
        <source> h</source>
        <translation> 小时</translation>
    </message>
    <message>
        <source>no plan</source>
        <translation>不设计划</translation>
    </message>
    <message>
        <source>Planned runtime</source>
        <translation>计划运行时长</translation>
    </message>
    <message>
        <source>Experiment tag</source>
        <translation>实验标签</translation>
    </message>
    <message>
        <source>the rate</source>
        <translation>单价</translation>
    </message>
    <message>
        <source>Metered at {rate} for the instance.</source>
        <translation>实例按 {rate} 计费。</translation>
    </message>
    <message>
        <source>(no host)</source>
        <translation>（无主机）</translation>
    </message>
</context>
</TS>
