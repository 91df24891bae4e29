<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>BillingPage</name>
    <message>
        <source>How to pay for it</source>
        <translation>选择计费方式</translation>
    </message>
    <message>
        <source>On demand, spot, a monthly plan or buying the card: each option&apos;s cost for your plan and where one starts to beat another.</source>
        <translation>按量计费、竞价实例、包月或自购显卡：按你的用量计划算出每种方式的费用，以及从哪里开始一种比另一种划算。</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>币种</translation>
    </message>
    <message>
        <source>GPU hours per week</source>
        <translation>每周 GPU 小时数</translation>
    </message>
    <message>
        <source>For how many weeks</source>
        <translation>持续几周</translation>
    </message>
    <message>
        <source>On-demand price per GPU-hour</source>
        <translation>按量计费单价（每 GPU 小时）</translation>
    </message>
    <message>
        <source>Spot price per GPU-hour (optional)</source>
        <translation>竞价实例单价（每 GPU 小时，可选）</translation>
    </message>
    <message>
        <source>Monthly plan price per GPU (optional)</source>
        <translation>包月价格（每 GPU，可选）</translation>
    </message>
    <message>
        <source>Buying: card price (optional)</source>
        <translation>自购：显卡价格（可选）</translation>
    </message>
    <message>
        <source>Buying: power draw, W</source>
        <translation>自购：功耗（W）</translation>
    </message>
    <message>
        <source>Buying: electricity per kWh</source>
        <translation>自购：电价（每 kWh）</translation>
    </message>
    <message>
        <source>Meter this rental as</source>
        <translation>本次租用的计费方式</translation>
    </message>
    <message>
        <source>From the estimate: one run takes about {hours} GPU-hours on one {card}. Change the hours below if you will run the job more than once.</source>
        <translation>按估算：跑一次约需 {hours} GPU 小时（1 张 {card}）。如果这个任务要跑不止一次，请修改下面的小时数。</translation>
    </message>
    <message>
        <source>From the estimate: one run takes about {hours} GPU-hours ({gpus} × {card} for {wall} h). Change the hours below if you will run the job more than once.</source>
        <translation>按估算：跑一次约需 {hours} GPU 小时（{gpus} × {card}，各 {wall} 小时）。如果这个任务要跑不止一次，请修改下面的小时数。</translation>
    </message>
    <message>
        <source>On demand (per hour)</source>
        <translation>按量计费（按小时）</translation>
    </message>
    <message>
        <source>Spot (per hour, interruptible)</source>
        <translation>竞价实例（按小时，可能被中断）</translation>
    </message>
    <message>
        <source>Monthly plan (per 30 days)</source>
        <translation>包月（每 30 天）</translation>
    </message>
    <message>
        <source>the prices above cannot be compared yet: correct the one the message names.</source>
        <translation>上面的价格还无法比较：请改正提示中指出的那一项。</translation>
    </message>
    <message>
        <source>hours/month</source>
        <translation>小时/月</translation>
    </message>
    <message>
        <source>months</source>
        <translation>个月</translation>
    </message>
    <message>
        <source>{option}: {total}</source>
        <translation>{option}：{total}</translation>
    </message>
    <message>
        <source>never</source>
        <translation>永不</translation>
    </message>
    <message>
        <source>{value} {unit}</source>
        <translation>{value} {unit}</translation>
    </message>
</context>
<context>
    <name>BudgetPage</name>
    <message>
        <source>Metered on demand at {rate}.</source>
        <translation>按量计费，单价 {rate}。</translation>
    </message>
    <message>
        <source>Metered on spot at {rate}.</source>
        <translation>竞价实例计费，单价 {rate}。</translation>
    </message>
    <message>
        <source>Metered on a monthly plan at {rate}.</source>
        <translation>包月计费，价格 {rate}。</translation>
    </message>
    <message>
        <source>{hours} h on demand ≈ {cost}.</source>
        <translation>按量计费 {hours} 小时 ≈ {cost}。</translation>
    </message>
    <message>
        <source>{hours} h on spot ≈ {cost}.</source>
        <translation>竞价实例 {hours} 小时 ≈ {cost}。</translation>
    </message>
    <message>
        <source>{hours} h on a monthly plan ≈ {cost}.</source>
        <translation>包月 {hours} 小时 ≈ {cost}。</translation>
    </message>
    <message>
        <source>{hours} h on demand ≈ {cost}, {share} of this budget.</source>
        <translation>按量计费 {hours} 小时 ≈ {cost}，占本预算的 {share}。</translation>
    </message>
    <message>
        <source>{hours} h on spot ≈ {cost}, {share} of this budget.</source>
        <translation>竞价实例 {hours} 小时 ≈ {cost}，占本预算的 {share}。</translation>
    </message>
    <message>
        <source>{hours} h on a monthly plan ≈ {cost}, {share} of this budget.</source>
        <translation>包月 {hours} 小时 ≈ {cost}，占本预算的 {share}。</translation>
    </message>
    <message>
        <source>Budget and planned runtime</source>
        <translation>预算与计划时长</translation>
    </message>
    <message>
        <source>The ledger meters the rental from now on and warns at 50%, 80% and 100% of the budget, when the GPU sits idle, and before the planned end.</source>
        <translation>从现在起账本开始为这次租用计费，在花费达到预算的 50%、80% 和 100% 时、GPU 空闲时以及计划结束前提醒你。</translation>
    </message>
    <message>
        <source> h</source>
        <translation> 小时</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>Monthly budget for this platform</source>
        <translation>此平台的每月预算</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>币种</translation>
    </message>
    <message>
        <source>Planned runtime</source>
        <translation>计划运行时长</translation>
    </message>
    <message>
        <source>Alert when the GPU is idle for</source>
        <translation>GPU 空闲多久后提醒</translation>
    </message>
    <message>
        <source>Release it for me when idle that long</source>
        <translation>空闲这么久就替我释放实例</translation>
    </message>
    <message>
        <source>After a 10 min countdown you can stop, and only once its backup checklist passes; change it on the Release page (Auto-release…).</source>
        <translation>释放前有 10 分钟倒计时，期间你可以取消；且只有备份清单通过后才会释放。可在“释放”页的“自动释放…”中修改。</translation>
    </message>
    <message>
        <source>Replace the monthly budget of {amount} already set for {scope} with this one (unticked, that budget stays as it is)</source>
        <translation>用这个预算替换已为 {scope} 设置的每月预算 {amount}（不勾选则保留原预算不变）</translation>
    </message>
    <message>
        <source>the budget</source>
        <translation>预算</translation>
    </message>
    <message>
        <source>Enter the budget as a number above 0, e.g. 50.</source>
        <translation>请输入大于 0 的预算金额，例如 50。</translation>
    </message>
    <message>
        <source>month</source>
        <translation>月</translation>
    </message>
    <message>
        <source>{amount}/month</source>
        <translation>{amount}/月</translation>
    </message>
    <message>
        <source>enter the budget as a number above 0, e.g. 50.</source>
        <translation>请输入大于 0 的预算金额，例如 50。</translation>
    </message>
</context>
<context>
    <name>ConnectionPage</name>
    <message>
        <source>Connection details</source>
        <translation>连接信息</translation>
    </message>
    <message>
        <source>Paste the ssh command the console shows, or fill the fields.</source>
        <translation>粘贴控制台显示的 ssh 命令，或手动填写各项。</translation>
    </message>
    <message>
        <source>short name for `ssh ALIAS`, e.g. gpu1</source>
        <translation>用于 `ssh ALIAS` 的简短名称，例如 gpu1</translation>
    </message>
    <message>
        <source>Host name or IP</source>
        <translation>主机名或 IP</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户名</translation>
    </message>
    <message>
        <source>Alias</source>
        <translation>别名</translation>
    </message>
    <message>
        <source>GPUs rented</source>
        <translation>租用的 GPU 数</translation>
    </message>
    <message>
        <source>Not understood yet: {error}</source>
        <translation>暂未识别：{error}</translation>
    </message>
    <message>
        <source>Read: {user}@{host}, port {port}.</source>
        <translation>已读取：{user}@{host}，端口 {port}。</translation>
    </message>
    <message>
        <source> Note: {note}.</source>
        <translation>注意：{note}。</translation>
    </message>
</context>
<context>
    <name>CreateInstancePage</name>
    <message>
        <source>A pre-built CUDA + PyTorch image (e.g. “PyTorch 2.x, CUDA 12.x”), not a bare OS</source>
        <translation>使用预装 CUDA + PyTorch 的镜像（例如“PyTorch 2.x, CUDA 12.x”），不要用纯系统镜像</translation>
    </message>
    <message>
        <source>This platform&apos;s SSH public key (below) pasted into its console — no password login</source>
        <translation>已把此平台的 SSH 公钥（见下方）粘贴到控制台——不使用密码登录</translation>
    </message>
    <message>
        <source>A separate data disk or volume for datasets and checkpoints, apart from the system disk</source>
        <translation>为数据集和检查点单独挂载数据盘或存储卷，不放在系统盘上</translation>
    </message>
    <message>
        <source>No open ports beyond SSH: reach Jupyter or TensorBoard through an SSH tunnel</source>
        <translation>除 SSH 外不开放任何端口：通过 SSH 隧道访问 Jupyter 或 TensorBoard</translation>
    </message>
    <message>
        <source>Create the instance on the platform</source>
        <translation>在平台上创建实例</translation>
    </message>
    <message>
        <source>In the provider&apos;s console, create an on-demand instance with the card you chose, and tick each point as you set it.</source>
        <translation>在平台控制台中，用你选好的 GPU 创建一个按量计费实例，每完成一项就勾选一项。</translation>
    </message>
    <message>
        <source>e.g. vast.ai, RunPod, AutoDL</source>
        <translation>例如 vast.ai、RunPod、AutoDL</translation>
    </message>
    <message>
        <source>Platform</source>
        <translation>平台</translation>
    </message>
    <message>
        <source>Generate this platform&apos;s key</source>
        <translation>生成此平台的密钥</translation>
    </message>
    <message>
        <source>Copy public key</source>
        <translation>复制公钥</translation>
    </message>
    <message>
        <source>Name the platform first: the key is made for it.</source>
        <translation>请先填写平台名称：密钥是为该平台生成的。</translation>
    </message>
    <message>
        <source>Generating the key for {name}…</source>
        <translation>正在为 {name} 生成密钥…</translation>
    </message>
    <message>
        <source>Key for {name}: {fingerprint}. The private key stays in the OS keyring.</source>
        <translation>{name} 的密钥：{fingerprint}。私钥保存在系统密钥环中。</translation>
    </message>
    <message>
        <source>No key was made: {error}</source>
        <translation>未生成密钥：{error}</translation>
    </message>
    <message>
        <source>{status} Copied.</source>
        <translation>{status}已复制。</translation>
    </message>
    <message>
        <source>name the platform you rent from.</source>
        <translation>请填写你租用的平台名称。</translation>
    </message>
    <message>
        <source>tick each point of the checklist once it is done ({left} left).</source>
        <translation>每完成清单中的一项就勾选它（还剩 {left} 项）。</translation>
    </message>
</context>
<context>
    <name>EstimatePage</name>
    <message>
        <source>How much GPU memory the job needs</source>
        <translation>这个任务需要多少显存</translation>
    </message>
    <message>
        <source>Each line with its formula, so you can redo the sums.</source>
        <translation>每一行都附有公式，你可以自己复算。</translation>
    </message>
    <message>
        <source>Part</source>
        <translation>组成部分</translation>
    </message>
    <message>
        <source>Formula</source>
        <translation>公式</translation>
    </message>
    <message>
        <source>Use gradient checkpointing</source>
        <translation>开启梯度检查点</translation>
    </message>
    <message>
        <source>&lt;b&gt;{gib} GiB&lt;/b&gt; in total for {model} ({params} B params, weights in {precision}) on one GPU. The next page lists the cards with how many of each the job needs.</source>
        <translation>在单张 GPU 上共需 &lt;b&gt;{gib} GiB&lt;/b&gt;：{model}（{params} B 参数，权重为 {precision}）。下一页列出各款 GPU 以及这个任务各需几张。</translation>
    </message>
    <message>
        <source>the job could not be estimated: go back and change what the message names.</source>
        <translation>无法估算这个任务：请返回修改提示中指出的那一项。</translation>
    </message>
</context>
<context>
    <name>FirstConnectionPage</name>
    <message>
        <source>First connection</source>
        <translation>首次连接</translation>
    </message>
    <message>
        <source>The host&apos;s key is shown once, on first contact: compare its fingerprint with the provider&apos;s console before you trust it.</source>
        <translation>主机密钥只在首次连接时显示一次：信任之前，请先与平台控制台中显示的指纹核对。</translation>
    </message>
    <message>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Trust this host key</source>
        <translation>信任此主机密钥</translation>
    </message>
    <message>
        <source>connecting to the host…</source>
        <translation>正在连接主机…</translation>
    </message>
    <message>
        <source>the host key is not trusted yet: compare its fingerprint with the provider&apos;s console, then press the trust button.</source>
        <translation>主机密钥尚未信任：请与平台控制台中的指纹核对，然后点击信任按钮。</translation>
    </message>
    <message>
        <source>connect to the host first (press Connect).</source>
        <translation>请先连接主机（点击“连接”）。</translation>
    </message>
    <message>
        <source>Connected: the host key is trusted.</source>
        <translation>已连接：主机密钥已信任。</translation>
    </message>
    <message>
        <source>Connecting to {user}@{host}:{port}…</source>
        <translation>正在连接 {user}@{host}:{port}…</translation>
    </message>
    <message>
        <source>Connected: the host key is trusted and the login works.</source>
        <translation>已连接：主机密钥已信任，登录正常。</translation>
    </message>
    <message>
        <source>{error}
Trusted before: {known}
Offered now: {offered}
{hint}</source>
        <translation>{error}
之前信任的指纹：{known}
现在提供的指纹：{offered}
{hint}</translation>
    </message>
    <message>
        <source>This is a new instance: trust the new key</source>
        <translation>这是新实例：信任新密钥</translation>
    </message>
    <message>
        <source>First contact with this host. Its key fingerprint is:
{fingerprint}
If the provider&apos;s console shows the same, trust it.</source>
        <translation>首次连接此主机。它的密钥指纹是：
{fingerprint}
如果与平台控制台显示的一致，就信任它。</translation>
    </message>
    <message>
        <source>Could not connect: {error}</source>
        <translation>无法连接：{error}</translation>
    </message>
</context>
<context>
    <name>FirstRentalWizard</name>
    <message>
        <source>First rental</source>
        <translation>首次租用向导</translation>
    </message>
    <message>
        <source>Finish is not available yet: {reason}</source>
        <translation>“完成”暂不可用：{reason}</translation>
    </message>
    <message>
        <source>Next is not available yet: {reason}</source>
        <translation>“下一步”暂不可用：{reason}</translation>
    </message>
    <message>
        <source>Host {alias} is set up.</source>
        <translation>主机 {alias} 已设置好。</translation>
    </message>
    <message>
        <source>Wizard finished.</source>
        <translation>向导已完成。</translation>
    </message>
</context>
<context>
    <name>GpuPage</name>
    <message>
        <source>layers</source>
        <translation>按层切分</translation>
    </message>
    <message>
        <source>tp</source>
        <translation>张量并行</translation>
    </message>
    <message>
        <source>Choose the GPU</source>
        <translation>选择 GPU</translation>
    </message>
    <message>
        <source>Cards that fit, cheapest job first: hours from the estimate × the card&apos;s typical hourly price range (or yours). * not NVIDIA: the monitor and self-check do not apply.</source>
        <translation>能装下任务的 GPU，任务总费用最低的排在前面：估算的小时数 × 该卡的常见每小时价格区间（或你填的价格）。* 表示非 NVIDIA：监控和自检不适用。</translation>
    </message>
    <message>
        <source>Card</source>
        <translation>GPU 型号</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数</translation>
    </message>
    <message>
        <source>VRAM</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>Bandwidth</source>
        <translation>显存带宽</translation>
    </message>
    <message>
        <source>Interconnect</source>
        <translation>多卡互联</translation>
    </message>
    <message>
        <source>GPU-hours</source>
        <translation>GPU 小时</translation>
    </message>
    <message>
        <source>Job cost</source>
        <translation>任务费用</translation>
    </message>
    <message>
        <source>the catalogue&apos;s typical range</source>
        <translation>留空：使用目录中的常见价格区间</translation>
    </message>
    <message>
        <source>Your price per GPU-hour for the selected card</source>
        <translation>所选 GPU 的自定义单价（每 GPU 小时）</translation>
    </message>
    <message>
        <source>Currency</source>
        <translation>币种</translation>
    </message>
    <message>
        <source>Not even 8 of any card in the catalogue hold the job ({gib} GiB on one GPU): go back and try int4 weights, LoRA/QLoRA, gradient checkpointing or a shorter context.</source>
        <translation>目录中任何一款 GPU 用 8 张也装不下这个任务（单张 GPU 需 {gib} GiB）：请返回尝试 int4 权重、LoRA/QLoRA、梯度检查点或更短的上下文长度。</translation>
    </message>
    <message>
        <source>Only cards marked * (not NVIDIA) hold this job: choose one in the table if your platform rents it out.</source>
        <translation>只有标 * 的卡（非 NVIDIA）装得下这个任务：如果你的平台出租这种卡，请在表中选择它。</translation>
    </message>
    <message>
        <source>One {card} is too small: the job needs {gpus} of them ({how}).</source>
        <translation>一张 {card} 装不下：这个任务需要 {gpus} 张（{how}）。</translation>
    </message>
    <message>
        <source>the price</source>
        <translation>价格</translation>
    </message>
    <message>
        <source>the price must be above 0</source>
        <translation>价格必须大于 0</translation>
    </message>
    <message>
        <source>Not used: {error}.</source>
        <translation>未采用：{error}。</translation>
    </message>
    <message>
        <source>Ranked with your {currency} {price}/h for the {card}.</source>
        <translation>已按你填的 {currency} {price}/小时 为 {card} 重新排序。</translation>
    </message>
    <message>
        <source>no card fits this job: go back and make it smaller.</source>
        <translation>没有能装下这个任务的 GPU：请返回把任务调小。</translation>
    </message>
    <message>
        <source>choose a card in the table.</source>
        <translation>请在表中选择一款 GPU。</translation>
    </message>
</context>
<context>
    <name>PortEdit</name>
    <message>
        <source>Enter the SSH port (22 unless the console shows another).</source>
        <translation>请输入 SSH 端口（除非控制台显示其他端口，否则为 22）。</translation>
    </message>
    <message>
        <source>Port {port} is not a port number: ports go from 1 to 65535.</source>
        <translation>{port} 不是有效的端口号：端口范围是 1 到 65535。</translation>
    </message>
</context>
<context>
    <name>SelfCheckPage</name>
    <message>
        <source>Self-check</source>
        <translation>自检</translation>
    </message>
    <message>
        <source>Before you upload anything: is the GPU there and free, does PyTorch see it, and is the data disk big and fast enough?</source>
        <translation>上传任何数据之前先确认：GPU 是否在位且空闲，PyTorch 能否识别它，数据盘是否够大、够快？</translation>
    </message>
    <message>
        <source>Run again</source>
        <translation>重新运行</translation>
    </message>
    <message>
        <source>A failure here costs nothing yet: fix it before the paid hours run.</source>
        <translation>这里失败还不会产生费用：请在付费时长开始前修好。</translation>
    </message>
    <message>
        <source>the self-check is still running (Cancel stops it).</source>
        <translation>自检仍在运行（点击“取消”可停止）。</translation>
    </message>
</context>
<context>
    <name>TaskPage</name>
    <message>
        <source>Inference (serve or generate)</source>
        <translation>推理（部署服务或生成）</translation>
    </message>
    <message>
        <source>LoRA fine-tune</source>
        <translation>LoRA 微调</translation>
    </message>
    <message>
        <source>QLoRA fine-tune, 8-bit base</source>
        <translation>QLoRA 微调，8 位底座</translation>
    </message>
    <message>
        <source>QLoRA fine-tune, 4-bit base</source>
        <translation>QLoRA 微调，4 位底座</translation>
    </message>
    <message>
        <source>QLoRA fine-tune, 2-bit base</source>
        <translation>QLoRA 微调，2 位底座</translation>
    </message>
    <message>
        <source>Full fine-tune, Adam in mixed precision</source>
        <translation>全参数微调，Adam 混合精度</translation>
    </message>
    <message>
        <source>Full fine-tune, pure bf16</source>
        <translation>全参数微调，纯 bf16</translation>
    </message>
    <message>
        <source>{name} ({params} B params, MoE {active} B active)</source>
        <translation>{name}（{params} B 参数，MoE 激活 {active} B）</translation>
    </message>
    <message>
        <source>{name} ({params} B params)</source>
        <translation>{name}（{params} B 参数）</translation>
    </message>
    <message>
        <source>What will the GPU do?</source>
        <translation>GPU 要做什么？</translation>
    </message>
    <message>
        <source>Three numbers decide the card: the VRAM floor, the speed you need, and whether you train or serve.</source>
        <translation>三个数决定选哪款卡：显存下限、需要的速度，以及是训练还是推理。</translation>
    </message>
    <message>
        <source>Load config.json…</source>
        <translation>加载 config.json…</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> token</translation>
    </message>
    <message>
        <source>Gradient checkpointing (less memory, ~30% slower)</source>
        <translation>梯度检查点（省显存，慢约 30%）</translation>
    </message>
    <message>
        <source> million tokens</source>
        <translation> 百万 token</translation>
    </message>
    <message>
        <source>Tokens to train on (all epochs) or to generate: sets job hours.</source>
        <translation>要训练（所有 epoch 合计）或生成的 token 数：决定任务时长。</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Weights stored as</source>
        <translation>权重精度</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>上下文长度</translation>
    </message>
    <message>
        <source>Batch or users at once</source>
        <translation>批大小或并发用户数</translation>
    </message>
    <message>
        <source>LoRA rank</source>
        <translation>LoRA 秩</translation>
    </message>
    <message>
        <source>Size of the job</source>
        <translation>任务规模</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>no target</source>
        <translation>不设目标</translation>
    </message>
    <message>
        <source>Serving: one answer is</source>
        <translation>推理：每次回答长度</translation>
    </message>
    <message>
        <source>Serving: answer within</source>
        <translation>推理：回答限时</translation>
    </message>
    <message>
        <source>the task&apos;s usual one</source>
        <translation>该任务的常用精度</translation>
    </message>
    <message>
        <source>A model&apos;s config.json</source>
        <translation>模型的 config.json</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <source>{name} is not a config.json object.</source>
        <translation>{name} 不是 config.json 对象。</translation>
    </message>
    <message>
        <source>Could not use {path}: {error}</source>
        <translation>无法使用 {path}：{error}</translation>
    </message>
    <message>
        <source>From {path}: {model}.</source>
        <translation>来自 {path}：{model}。</translation>
    </message>
</context>
<context>
    <name>WizardPage</name>
    <message>
        <source>answer the questions above first.</source>
        <translation>请先回答上面的问题。</translation>
    </message>
</context>
<context>
    <name>WizardServices</name>
    <message>
        <source>Choose the platform this instance is rented on.</source>
        <translation>请选择此实例所在的平台。</translation>
    </message>
    <message>
        <source>Generating this platform&apos;s SSH key here comes with the Keys feature, which is not in this version yet. Until then, add your own public key in the provider&apos;s console.</source>
        <translation>在这里生成此平台的 SSH 密钥需要“密钥”功能，本版本尚未提供。在此之前，请在平台控制台中添加你自己的公钥。</translation>
    </message>
    <message>
        <source>The app&apos;s own SSH connection (host-key check, self-check) is not in this version yet. Until then, connect once with `ssh -p PORT user@host` in a terminal and compare the host-key fingerprint with the provider&apos;s console.</source>
        <translation>应用自带的 SSH 连接（主机密钥核对、自检）本版本尚未提供。在此之前，请在终端中用 `ssh -p PORT user@host` 连接一次，并与平台控制台中的主机密钥指纹核对。</translation>
    </message>
    <message>
        <source>The spend ledger is not in this version yet: nothing is metered and no budget alert will fire. Note the planned end time yourself and release the instance then.</source>
        <translation>本版本尚未提供花费账本：不会计费，也不会触发预算提醒。请自己记下计划结束时间，到时释放实例。</translation>
    </message>
</context>
</TS>
